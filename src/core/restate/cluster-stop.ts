import * as restate from '@restatedev/restate-sdk';
import { z } from 'zod';
import { ArchonError } from '../../shared/errors';
import { EstopStateSchema, type EstopState } from '../../shared/schemas/estop';
import type { RestateCluster } from './restate-cluster';
import { RUN_SERVICE, STOP_SERVICE, TOOL_SERVICE } from './service-names';
import { isSignedBy, signed } from './signed';

/**
 * The emergency stop of a whole Restate cluster: one keyed object, its latch. While it is latched,
 * no schedule starts a run, no worker drives one and no worker runs a tool call; latching it also
 * ends every run and tool call under way on the cluster. Only a desk holding the secret sets it.
 */
const KEY = 'cluster';
const LATCH = 'latch';
const UNLATCHED: EstopState = { latched: false, since: null, triggeredBy: null, reason: null };

/** The latch object a worker serves. */
export function stopObject(secret: string) {
  return restate.object({
    name: STOP_SERVICE,
    handlers: {
      set: async (ctx: restate.ObjectContext, input: unknown): Promise<EstopState> => {
        const state = EstopStateSchema.safeParse(input);
        if (!state.success || !isSignedBy(secret, ctx.key, input)) throw new restate.TerminalError("Refused: an emergency stop not signed with this cluster's secret.");
        ctx.set(LATCH, state.data);
        return state.data;
      },
      get: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext): Promise<EstopState> => EstopStateSchema.catch(UNLATCHED).parse((await ctx.get(LATCH)) ?? UNLATCHED)),
    },
  });
}

/** The latch as a handler sees it: asked through Restate, so a replay sees what the first attempt saw. */
export async function latchIn(ctx: restate.Context): Promise<EstopState> {
  const state = await ctx.genericCall({ service: STOP_SERVICE, method: 'get', key: KEY, parameter: null, inputSerde: restate.serde.json, outputSerde: restate.serde.json });
  return EstopStateSchema.catch(UNLATCHED).parse(state);
}

/** The latch as a desk or a worker's host asks it, through the ingress. */
export function clusterLatch(cluster: RestateCluster, signal: AbortSignal): Promise<EstopState> {
  return cluster.call(`${STOP_SERVICE}/${KEY}/get`, null, null, EstopStateSchema, signal);
}

/** Before a run goes to the cluster (its calls, or itself): it answers, a worker serves `service`, and its stop is not latched. */
export async function checkClusterForRun(cluster: RestateCluster, signal: AbortSignal, service = TOOL_SERVICE): Promise<void> {
  await cluster.check(service, signal);
  const latch = await clusterLatch(cluster, signal);
  if (latch.latched) throw clusterStopError(latch, cluster);
}

/** Why nothing starts while the cluster's stop is latched, and how to re-arm it. */
export function clusterStopError(state: EstopState, cluster: RestateCluster): ArchonError {
  return new ArchonError(
    'ESTOP_LATCHED',
    `Emergency stop latched on the Restate cluster at ${cluster.address.ingress} (${state.triggeredBy ?? 'unknown'}: ${state.reason ?? 'no reason given'}). Re-arm it with \`archon estop --reset\` and that cluster's flags (--restate-ingress, --restate-admin, --cluster-secret-file); nothing restarts by itself.`,
    { details: { triggeredBy: state.triggeredBy, reason: state.reason, since: state.since } },
  );
}

/** Sets the latch, then ends every run and tool call under way on the cluster; how many it ended. */
export async function latchClusterStop(cluster: RestateCluster, secret: string, state: EstopState, signal: AbortSignal): Promise<number> {
  await cluster.call(`${STOP_SERVICE}/${KEY}/set`, signed(secret, KEY, state), null, EstopStateSchema, signal);
  const running = await cluster.query(`SELECT id FROM sys_invocation WHERE target_service_name IN ('${RUN_SERVICE}', '${TOOL_SERVICE}') AND status <> 'completed'`, z.object({ id: z.string() }), signal);
  await Promise.all(running.map((invocation) => cluster.kill(invocation.id, signal)));
  return running.length;
}

/** Re-arms the cluster: runs and schedules start again from their next firing; nothing that was ended restarts. */
export async function resetClusterStop(cluster: RestateCluster, secret: string, signal: AbortSignal): Promise<void> {
  await cluster.call(`${STOP_SERVICE}/${KEY}/set`, signed(secret, KEY, UNLATCHED), null, EstopStateSchema, signal);
}
