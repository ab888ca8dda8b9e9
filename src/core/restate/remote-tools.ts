import { randomUUID } from 'node:crypto';
import { ArchonError } from '../../shared/errors';
import { ToolResultSchema, type ToolResult } from '../../shared/schemas/tool';
import { toolResult } from '../tools/tool-registry';
import type { CallOptions, ToolCaller } from '../tools/tool-caller';
import { CLUSTER_WAIT_MS, type RestateCluster } from './restate-cluster';
import type { RemoteCall } from './remote-call';
import { TOOL_SERVICE } from './service-names';
import { signed } from './signed';

/** How long ending the invocations of stopped calls may take. */
const KILL_TIMEOUT_MS = 5000;

/**
 * Built-in tool calls run by the workers of a Restate cluster: each call is one invocation of a keyed
 * object, under the run's call id (sent twice, it runs once), waited for across a restart of the server. Like the
 * local pool, a call never throws: what went wrong is its result.
 */
export class RemoteToolCaller implements ToolCaller {
  readonly executor: string;
  /** Beyond a call's own limit, what the desk waits for it: the cluster may be restarting, the workers busy. */
  readonly waitAllowanceMs = CLUSTER_WAIT_MS;
  private readonly running = new Set<string>();

  constructor(
    private readonly cluster: RestateCluster,
    private readonly secret: string,
  ) {
    this.executor = `restate:${cluster.address.ingress}`;
  }

  async call(tool: string, args: unknown, options: CallOptions): Promise<ToolResult> {
    const key = options.key ?? randomUUID();
    const call: RemoteCall = signed(this.secret, `${TOOL_SERVICE}/call`, key, { tool: tool as RemoteCall['tool'], args, timeoutMs: options.timeoutMs });
    const target = `${TOOL_SERVICE}/${encodeURIComponent(key)}/call`;
    let invocationId: string | null = null;
    try {
      invocationId = await this.cluster.send(target, call, key, options.signal);
      this.running.add(invocationId);
      return await this.cluster.output(invocationId, ToolResultSchema, options.signal);
    } catch (error) {
      if (options.signal.aborted) {
        // Sent again under its key, a call whose sending was cut short gives its id (or starts, to be ended at once).
        invocationId ??= await this.cluster.send(target, call, key, AbortSignal.timeout(KILL_TIMEOUT_MS)).catch(() => null);
        if (invocationId) await this.end(invocationId);
        return toolResult('cancelled', `${tool} was cancelled, and its invocation on the cluster ended.`);
      }
      const why = ArchonError.isInstance(error) ? error.message : `${tool} failed on the cluster: ${error instanceof Error ? error.message : String(error)}`;
      // Sent and never answered, the call may have run: the model is told to check before repeating it.
      return invocationId ? toolResult('error', `${why} It may have happened: check its effect before repeating it.`, { outcome: 'unknown' }) : toolResult('error', why);
    } finally {
      if (invocationId) this.running.delete(invocationId);
    }
  }

  /** The emergency stop: every invocation this run is waiting for ends now, and the tool processes they started with them. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.running].map((id) => this.end(id)));
  }

  private end(invocationId: string): Promise<void> {
    return this.cluster.kill(invocationId, AbortSignal.timeout(KILL_TIMEOUT_MS)).catch(() => undefined);
  }
}
