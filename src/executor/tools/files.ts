import { createHash } from 'node:crypto';
import { KEPT_PREVIOUS_BYTES, type FileEffect, type RestoreFileInput } from '../../shared/schemas/file-effect';
import type { ToolResult } from '../../shared/schemas/tool';
import { TOOL_LIMITS, type BuiltinToolInput } from '../../shared/tools/catalogue';
import { openWorkspaceFile, readWorkspaceFileIfAny, readWorkspaceFolder, removeWorkspaceFile, replaceWorkspaceFile } from '../workspace-files';
import { workspaceRelative } from '../workspace-paths';
import { result, workspaceOf, type ExecutorContext } from './tool-context';

const MAX_ENTRIES = 1000;

/** A file with a NUL byte in its first 8 KiB is treated as binary. */
function looksBinary(bytes: Buffer): boolean {
  return bytes.subarray(0, 8192).includes(0);
}

export async function listFiles(args: BuiltinToolInput<'list_files'>, context: ExecutorContext): Promise<ToolResult> {
  const { folder, entries } = await readWorkspaceFolder(workspaceOf(context), args.path ?? '.');
  const lines = entries
    .sort((a, b) => a.name.localeCompare(b.name))
    .slice(0, MAX_ENTRIES)
    .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.isSymbolicLink() ? `${entry.name}@` : entry.name));
  const more = entries.length > MAX_ENTRIES ? `\n[${entries.length - MAX_ENTRIES} more entries not listed]` : '';
  const where = workspaceRelative(context.workspace, folder);
  return result('success', lines.length > 0 ? `${lines.join('\n')}${more}` : `(${where} is empty)`, { count: entries.length });
}

export async function readTextFile(args: BuiltinToolInput<'read_file'>, context: ExecutorContext): Promise<ToolResult> {
  const handle = await openWorkspaceFile(workspaceOf(context), args.path);
  try {
    const info = await handle.stat();
    if (!info.isFile()) return result('error', `"${args.path}" is not a file. Use list_files to see what is there.`);
    const length = Math.min(info.size, TOOL_LIMITS.readBytes);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, 0);
    if (looksBinary(buffer)) return result('error', `"${args.path}" is a binary file (${info.size} bytes); it cannot be read as text.`, { bytes: info.size, binary: true });
    const note = info.size > length ? `\n[truncated: the file has ${info.size} bytes; only the first ${length} are shown]` : '';
    return result('success', buffer.toString('utf8') + note, { bytes: info.size });
  } finally {
    await handle.close();
  }
}

function describePrevious(bytes: Buffer | null): { existed: boolean; content?: string; bytes?: number } {
  if (!bytes) return { existed: false };
  return bytes.length <= TOOL_LIMITS.readBytes && !looksBinary(bytes) ? { existed: true, content: bytes.toString('utf8') } : { existed: true, bytes: bytes.length };
}

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

/** What the write did, for undo: the previous content is kept when small enough. */
function effectOf(path: string, previous: Buffer | null, content: string): FileEffect {
  return {
    path,
    existed: previous !== null,
    previousSha256: previous && sha256(previous),
    ...(previous && previous.length <= KEPT_PREVIOUS_BYTES ? { previousBase64: previous.toString('base64') } : {}),
    newSha256: sha256(content),
  };
}

/** Atomic and race-free: see workspace-files.ts. */
export async function writeTextFile(args: BuiltinToolInput<'write_file'>, context: ExecutorContext): Promise<ToolResult> {
  const { previous, real } = await replaceWorkspaceFile(workspaceOf(context), args.path, args.content);
  const bytes = Buffer.byteLength(args.content);
  const effect = effectOf(workspaceRelative(context.workspace, real), previous, args.content);
  return result('success', `Wrote ${bytes} bytes to ${args.path}.`, { bytes, previous: describePrevious(previous), effect });
}

/** Undo's step: puts a file back (or deletes it) unless it changed since the run left it. */
export async function restoreFile(args: RestoreFileInput, context: ExecutorContext): Promise<ToolResult> {
  const workspace = workspaceOf(context);
  const current = await readWorkspaceFileIfAny(workspace, args.path);
  if (current === null || sha256(current) !== args.expectedSha256) {
    return result('denied', `${args.path} was ${current === null ? 'deleted' : 'changed'} since the run wrote it; it was left as it is.`);
  }
  if (args.contentBase64 === null) await removeWorkspaceFile(workspace, args.path);
  else await replaceWorkspaceFile(workspace, args.path, Buffer.from(args.contentBase64, 'base64'));
  return result('success', args.contentBase64 === null ? `Deleted ${args.path}.` : `Restored ${args.path}.`);
}
