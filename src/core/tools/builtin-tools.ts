import type { Settings } from '../../shared/schemas/settings';
import { BUILTIN_TOOL_NAMES, TOOL_CATALOGUE, type BuiltinToolName } from '../../shared/tools/catalogue';
import { defineTool, ToolRegistry, type ToolDefinition } from './tool-registry';
import type { ToolWorkerPool } from './tool-worker-pool';

function callTimeout(name: BuiltinToolName, args: unknown): number {
  const seconds = name === 'run_command' ? (args as { timeout_s?: number }).timeout_s : undefined;
  return seconds !== undefined ? Math.round(seconds * 1000) : TOOL_CATALOGUE[name].timeoutMs;
}

/** Commands run outside any OS sandbox when the operator turned it off. */
const CONFINED_BY_SANDBOX: ReadonlySet<BuiltinToolName> = new Set(['run_command']);

function builtinTool(name: BuiltinToolName, pool: ToolWorkerPool, sandbox: Settings['sandbox']): ToolDefinition {
  const spec = TOOL_CATALOGUE[name];
  return defineTool({
    name,
    description: spec.description,
    input: spec.input,
    sideEffects: spec.sideEffects,
    idempotent: spec.idempotent,
    unconfined: sandbox === 'off' && CONFINED_BY_SANDBOX.has(name),
    timeoutMs: spec.timeoutMs,
    timeoutFor: (args) => callTimeout(name, args),
    run: (args, context) => pool.call(name, args, { signal: context.signal, timeoutMs: context.timeoutMs, onSpawn: context.onSpawn }),
  });
}

/** The built-in tools, each running in the pool's tool processes; tools the operator disabled are left out. */
export function builtinTools(pool: ToolWorkerPool, settings: Partial<Pick<Settings, 'disabledTools' | 'sandbox'>> = {}): ToolRegistry {
  const disabled = settings.disabledTools ?? [];
  return new ToolRegistry(BUILTIN_TOOL_NAMES.filter((name) => !disabled.includes(name)).map((name) => builtinTool(name, pool, settings.sandbox ?? 'on')));
}
