import { BUILTIN_TOOL_NAMES, TOOL_CATALOGUE, type BuiltinToolName } from '../../shared/tools/catalogue';
import { defineTool, ToolRegistry, type ToolDefinition } from './tool-registry';
import type { ToolWorkerPool } from './tool-worker-pool';

function callTimeout(name: BuiltinToolName, args: unknown): number {
  const seconds = name === 'run_command' ? (args as { timeout_s?: number }).timeout_s : undefined;
  return seconds !== undefined ? Math.round(seconds * 1000) : TOOL_CATALOGUE[name].timeoutMs;
}

function builtinTool(name: BuiltinToolName, pool: ToolWorkerPool): ToolDefinition {
  const spec = TOOL_CATALOGUE[name];
  return defineTool({
    name,
    description: spec.description,
    input: spec.input,
    sideEffects: spec.sideEffects,
    idempotent: spec.idempotent,
    timeoutMs: spec.timeoutMs,
    timeoutFor: (args) => callTimeout(name, args),
    run: (args, context) => pool.call(name, args, { signal: context.signal, timeoutMs: context.timeoutMs, onSpawn: context.onSpawn }),
  });
}

/** The built-in tools, each running in the pool's tool processes; tools the operator disabled are left out. */
export function builtinTools(pool: ToolWorkerPool, disabled: readonly string[] = []): ToolRegistry {
  return new ToolRegistry(BUILTIN_TOOL_NAMES.filter((name) => !disabled.includes(name)).map((name) => builtinTool(name, pool)));
}
