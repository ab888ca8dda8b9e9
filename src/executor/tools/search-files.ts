import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ToolResult } from '../../shared/schemas/tool';
import { TOOL_LIMITS, type BuiltinToolInput } from '../../shared/tools/catalogue';
import { openWorkspaceFile } from '../workspace-files';
import { resolveInWorkspace, workspaceRelative, type Workspace } from '../workspace-paths';
import { result, workspaceOf, type ExecutorContext } from './tool-context';

const SKIPPED_FOLDERS = new Set(['.git', 'node_modules', '.hg', '.svn']);
const MAX_FILES = 20_000;

async function* textFiles(folder: string, signal: AbortSignal, budget: { files: number }): AsyncGenerator<string> {
  const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (signal.aborted || budget.files <= 0) return;
    const path = join(folder, entry.name);
    if (entry.isDirectory() && !SKIPPED_FOLDERS.has(entry.name)) yield* textFiles(path, signal, budget);
    else if (entry.isFile()) {
      budget.files--;
      yield path;
    }
  }
}

/** A workspace file's bytes, read through a checked descriptor (see workspace-files.ts); null when too large or refused. */
async function smallFile(workspace: Workspace, file: string): Promise<Buffer | null> {
  const handle = await openWorkspaceFile(workspace, file).catch(() => null);
  if (!handle) return null;
  try {
    return (await handle.stat()).size > TOOL_LIMITS.searchFileBytes ? null : await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** Case-insensitive text search; binary and very large files are passed over. */
export async function searchFiles(args: BuiltinToolInput<'search_files'>, context: ExecutorContext): Promise<ToolResult> {
  const workspace = workspaceOf(context);
  const root = resolveInWorkspace(workspace, args.path ?? '.');
  const limit = args.max_results ?? 100;
  const needle = args.query.toLowerCase();
  const matches: string[] = [];
  const budget = { files: MAX_FILES };
  for await (const file of textFiles(root, context.signal, budget)) {
    const bytes = await smallFile(workspace, file);
    if (!bytes) continue;
    if (bytes.subarray(0, 8192).includes(0)) continue;
    const lines = bytes.toString('utf8').split('\n');
    for (let index = 0; index < lines.length && matches.length < limit; index++) {
      const line = lines[index] as string;
      if (line.toLowerCase().includes(needle)) matches.push(`${workspaceRelative(context.workspace, file)}:${index + 1}: ${line.trim().slice(0, 300)}`);
    }
    if (matches.length >= limit) break;
  }
  const capped = matches.length >= limit ? `\n[stopped at ${limit} matches]` : '';
  return result('success', matches.length > 0 ? matches.join('\n') + capped : `No match for "${args.query}".`, { matches: matches.length });
}
