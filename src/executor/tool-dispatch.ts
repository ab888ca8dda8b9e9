import type { z } from 'zod';
import { describeZodError } from '../shared/errors';
import { RESTORE_FILE, RestoreFileInputSchema } from '../shared/schemas/file-effect';
import type { ToolResult } from '../shared/schemas/tool';
import { isBuiltinTool, TOOL_CATALOGUE, type BuiltinToolInput, type BuiltinToolName } from '../shared/tools/catalogue';
import { calculator } from './tools/calculator';
import { listFiles, readTextFile, restoreFile, writeTextFile } from './tools/files';
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
type Operation = { input: z.ZodType; run: (args: never, context: ExecutorContext) => ToolResult | Promise<ToolResult> };

/** A built-in tool, or the runtime's own file operation for undo (no model is offered it). */
function operationNamed(name: string): Operation | null {
  if (name === RESTORE_FILE) return { input: RestoreFileInputSchema, run: restoreFile };
  return isBuiltinTool(name) ? { input: TOOL_CATALOGUE[name].input, run: IMPLEMENTATIONS[name] } : null;
}

export async function dispatchTool(name: string, rawArgs: unknown, context: ExecutorContext): Promise<ToolResult> {
  const operation = operationNamed(name);
  if (!operation) return result('error', `Unknown tool "${name}".`);
  const parsed = operation.input.safeParse(rawArgs);
  if (!parsed.success) return result('error', `Invalid arguments for ${name}: ${describeZodError(parsed.error)}.`);
  try {
    const implementation = operation.run as (args: unknown, context: ExecutorContext) => ToolResult | Promise<ToolResult>;
    return await implementation(parsed.data, context);
  } catch (error) {
    if (error instanceof PathDenied) return result('denied', error.message);
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return result('error', `${name}: no such file or folder. Use list_files to see what exists.`, { missing: true });
    if (code === 'ERR_ACCESS_DENIED') return result('denied', `${name}: the tool process may not touch that path (it is outside the workspace).`);
    return result('error', `${name} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}
