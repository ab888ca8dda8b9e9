import type { Settings } from '../../shared/schemas/settings';
import { BUILTIN_TOOL_NAMES, TOOL_CATALOGUE, type BuiltinToolName } from '../../shared/tools/catalogue';
import type { ApprovalPreview } from '../../shared/schemas/approval';
import { commandPreview, writePreview } from './call-preview';
import { defineTool, ToolRegistry, type PreviewContext, type ToolDefinition } from './tool-registry';
import type { ToolCaller } from './tool-caller';

function callTimeout(name: BuiltinToolName, args: unknown): number {
  const seconds = name === 'run_command' ? (args as { timeout_s?: number }).timeout_s : undefined;
  return seconds !== undefined ? Math.round(seconds * 1000) : TOOL_CATALOGUE[name].timeoutMs;
}

/** Commands run outside any OS sandbox when the operator turned it off. */
const CONFINED_BY_SANDBOX: ReadonlySet<BuiltinToolName> = new Set(['run_command']);

type Preview = (args: never, pool: ToolCaller, context: PreviewContext) => Promise<ApprovalPreview>;

/** The file to be written is read through the confined reader of the tool processes, like any read_file. */
const PREVIEWS: Partial<Record<BuiltinToolName, Preview>> = {
  write_file: async (args: { path: string; content: string }, pool, context) =>
    writePreview(args.path, args.content, await pool.call('read_file', { path: args.path }, { signal: context.signal, timeoutMs: TOOL_CATALOGUE.read_file.timeoutMs, readOnly: true })),
  run_command: (args: { command: string }, _pool, context) => commandPreview(args.command, context.workspace),
};

function builtinTool(name: BuiltinToolName, pool: ToolCaller, sandbox: Settings['sandbox']): ToolDefinition {
  const spec = TOOL_CATALOGUE[name];
  const preview = PREVIEWS[name];
  return defineTool({
    name,
    description: spec.description,
    input: spec.input,
    sideEffects: spec.sideEffects,
    idempotent: spec.idempotent,
    unconfined: sandbox === 'off' && CONFINED_BY_SANDBOX.has(name),
    executor: pool.executor,
    waitAllowanceMs: pool.waitAllowanceMs,
    timeoutMs: spec.timeoutMs,
    timeoutFor: (args) => callTimeout(name, args),
    run: (args, context) => pool.call(name, args, { signal: context.signal, timeoutMs: context.timeoutMs, onSpawn: context.onSpawn, readOnly: spec.sideEffects === 'none', key: `${context.runId}/${context.callId}` }),
    ...(preview ? { preview: (args: unknown, context: PreviewContext) => preview(args as never, pool, context) } : {}),
  });
}

/** The built-in tools, each running where `pool` runs them; tools the operator disabled are left out. */
export function builtinTools(pool: ToolCaller, settings: Partial<Pick<Settings, 'disabledTools' | 'sandbox'>> = {}): ToolRegistry {
  const disabled = settings.disabledTools ?? [];
  return new ToolRegistry(BUILTIN_TOOL_NAMES.filter((name) => !disabled.includes(name)).map((name) => builtinTool(name, pool, settings.sandbox ?? 'on')));
}
