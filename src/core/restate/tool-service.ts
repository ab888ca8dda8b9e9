import * as restate from '@restatedev/restate-sdk';
import { TOOL_CATALOGUE } from '../../shared/tools/catalogue';
import type { ToolResult } from '../../shared/schemas/tool';
import { toolResult, UNCERTAIN_OUTCOME } from '../tools/tool-registry';
import type { ToolCaller } from '../tools/tool-caller';
import { MAX_CALL_MS, RemoteCallSchema, type RemoteCall } from './remote-call';
import { CALL_MARKS, TOOL_SERVICE } from './service-names';
import { latchIn } from './cluster-stop';
import { beganMarks, markBegun } from './began-marks';
import { isSignedBy } from './signed';
import type { RestateCluster } from './restate-cluster';

export interface ToolWorker {
  id: string;
  caller: ToolCaller;
  cluster: RestateCluster;
  /** The cluster's secret: a call not signed with it is refused. */
  secret: string;
}

/** A call runs in one attempt, whatever its length: Restate would otherwise end an attempt that says nothing for a minute. */
const ATTEMPT_TIMEOUT_MS = MAX_CALL_MS + 60_000;

/**
 * Runs the call once per key: the result is journaled, so a later attempt (this worker's or
 * another's, after a crash) returns it without running the call again. A call with side effects is
 * marked before it starts; an attempt, or another invocation under the same key (a replay), that
 * finds the mark reports the outcome uncertain instead of running it, and the desk decides.
 */
async function callOnce(ctx: restate.ObjectContext, worker: ToolWorker, call: RemoteCall): Promise<ToolResult> {
  const spec = TOOL_CATALOGUE[call.tool];
  const signal = ctx.request().attemptCompletedSignal;
  const mark = () => markBegun(worker.cluster, worker.secret, CALL_MARKS, ctx.key, worker.id, signal);
  if (spec.sideEffects !== 'none' && (await mark()) !== null) {
    return toolResult('error', `${call.tool} began on a worker that stopped before it reported: it may already have happened.`, { outcome: UNCERTAIN_OUTCOME, worker: worker.id });
  }
  const result = await worker.caller.call(call.tool, call.args, { signal, timeoutMs: call.timeoutMs, readOnly: spec.sideEffects === 'none' });
  return { ...result, metadata: { ...result.metadata, worker: worker.id } };
}

/** Why a worker does not run what it was sent. */
function refusal(worker: ToolWorker, key: string, input: unknown): string | null {
  const call = RemoteCallSchema.safeParse(input);
  if (!call.success) return `Refused by worker ${worker.id}: not a tool call it runs (${call.error.issues[0]?.message ?? 'invalid'}).`;
  return isSignedBy(worker.secret, `${TOOL_SERVICE}/call`, key, input) ? null : `Refused by worker ${worker.id}: not signed with this cluster's secret under its key.`;
}

/** The tool object of a worker, and where it marks calls: built-in tools only, each call checked again against its schema by the tool process. */
export function toolServices(worker: ToolWorker) {
  const tools = restate.object({
    name: TOOL_SERVICE,
    handlers: {
      call: async (ctx: restate.ObjectContext, input: unknown): Promise<ToolResult> => {
        const refused = refusal(worker, ctx.key, input);
        if (refused) throw new restate.TerminalError(refused);
        const call = RemoteCallSchema.parse(input);
        const latch = await latchIn(ctx);
        if (latch.latched) return toolResult('cancelled', `Not run: the emergency stop is latched on the cluster (${latch.reason ?? 'no reason given'}).`, { worker: worker.id });
        return ctx.run('call', () => callOnce(ctx, worker, call));
      },
    },
    options: { inactivityTimeout: ATTEMPT_TIMEOUT_MS, abortTimeout: ATTEMPT_TIMEOUT_MS },
  });
  return [tools, beganMarks(CALL_MARKS, worker.secret)] as const;
}
