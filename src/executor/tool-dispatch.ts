import { describeZodError } from '../shared/errors';
import type { ToolResult } from '../shared/schemas/tool';
import { isBuiltinTool, TOOL_CATALOGUE, type BuiltinToolInput, type BuiltinToolName } from '../shared/tools/catalogue';
import { calculator } from './tools/calculator';
import { listFiles, readTextFile, writeTextFile } from './tools/files';
import { httpGet } from './tools/http-get';
import { runCommand } from './tools/run-command';
import { searchFiles } from './tools/search-files';
import { result, type ExecutorContext } from './tools/tool-context';
import { PathDenied } from './workspace-paths';

type Implementations = { [Name in BuiltinToolName]: (args: BuiltinToolInput<Name>, context: ExecutorContext) => ToolResult | Promise<ToolResult> };

const IMPLEMENTATIONS: Implementations = {
  calculator,
  list_files: listFiles,
  read_file: readTextFile,
  write_file: writeTextFile,
  run_command: runCommand,
  search_files: searchFiles,
  http_get: httpGet,
};

/** Validates again inside the tool process (the runtime is not trusted blindly either), then runs. */
export async function dispatchTool(name: string, rawArgs: unknown, context: ExecutorContext): Promise<ToolResult> {
  if (!isBuiltinTool(name)) return result('error', `Unknown tool "${name}".`);
  const parsed = TOOL_CATALOGUE[name].input.safeParse(rawArgs);
  if (!parsed.success) return result('error', `Invalid arguments for ${name}: ${describeZodError(parsed.error)}.`);
  try {
    const implementation = IMPLEMENTATIONS[name] as (args: unknown, context: ExecutorContext) => ToolResult | Promise<ToolResult>;
    return await implementation(parsed.data, context);
  } catch (error) {
    if (error instanceof PathDenied) return result('denied', error.message);
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return result('error', `${name}: no such file or folder. Use list_files to see what exists.`, { missing: true });
    if (code === 'ERR_ACCESS_DENIED') return result('denied', `${name}: the tool process may not touch that path (it is outside the workspace).`);
    return result('error', `${name} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}
