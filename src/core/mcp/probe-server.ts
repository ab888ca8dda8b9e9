import { anySignal } from '../../shared/abort';
import type { McpServerConfig } from '../../shared/schemas/settings';
import type { SideEffects } from '../../shared/schemas/tool';
import { McpServerError, type McpFailure } from './mcp-failure';
import { McpSession } from './mcp-session';
import { MCP_START_TIMEOUT_MS } from './mcp-sessions';
import type { Confinement } from './stdio-launch';
import { idempotentOf, sideEffectsOf } from './tool-definition';
import { registeredToolNames } from './tool-names';

export interface ProbedTool {
  /** The tool's name on its server. */
  name: string;
  /** The name runs and settings know it by (`SERVER__TOOL`). */
  registeredName: string;
  description: string;
  sideEffects: SideEffects;
  idempotent: boolean;
}

export type McpProbe = { ok: true; tools: ProbedTool[] } | { ok: false; failure: McpFailure };

export interface ProbeOptions extends Confinement {
  signal?: AbortSignal;
  timeoutMs?: number;
}

/**
 * Starts one server as a run would (stdio inside the sandbox), lists its tools with their side
 * effects, and stops it; or says what failed (not found, crashed, timed out, protocol error).
 * `archon mcp list` and the app's "Test" button use it. Never throws for the server's faults; when
 * `signal` ends it (the emergency stop), the server's process group is killed and it throws the
 * signal's reason.
 */
export async function probeMcpServer(name: string, config: McpServerConfig, options: ProbeOptions): Promise<McpProbe> {
  const timeoutMs = options.timeoutMs ?? MCP_START_TIMEOUT_MS;
  const { workspace, sandbox, allowNetwork, hidden } = options;
  const session = new McpSession({ name, config, confinement: { workspace, sandbox, allowNetwork, hidden }, startTimeoutMs: timeoutMs });
  try {
    await session.start(anySignal(options.signal, AbortSignal.timeout(timeoutMs + 1000)));
    const names = registeredToolNames(name, session.tools.map((tool) => tool.name));
    const tools = session.tools.map((tool) => ({
      name: tool.name,
      registeredName: names.get(tool.name) ?? tool.name,
      description: tool.description ?? '',
      sideEffects: sideEffectsOf(tool),
      idempotent: idempotentOf(tool),
    }));
    return { ok: true, tools };
  } catch (error) {
    options.signal?.throwIfAborted();
    if (error instanceof McpServerError) return { ok: false, failure: error.failure };
    return { ok: false, failure: { kind: 'protocol', message: `MCP server "${name}": ${error instanceof Error ? error.message : String(error)}` } };
  } finally {
    await session.kill();
  }
}
