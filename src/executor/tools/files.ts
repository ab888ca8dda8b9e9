import type { ToolResult } from '../../shared/schemas/tool';
import { TOOL_LIMITS, type BuiltinToolInput } from '../../shared/tools/catalogue';
import { openWorkspaceFile, readWorkspaceFolder, replaceWorkspaceFile } from '../workspace-files';
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

/** Atomic and race-free: see workspace-files.ts. */
export async function writeTextFile(args: BuiltinToolInput<'write_file'>, context: ExecutorContext): Promise<ToolResult> {
  const previous = describePrevious(await replaceWorkspaceFile(workspaceOf(context), args.path, args.content));
  const bytes = Buffer.byteLength(args.content);
  return result('success', `Wrote ${bytes} bytes to ${args.path}.`, { bytes, previous });
}
