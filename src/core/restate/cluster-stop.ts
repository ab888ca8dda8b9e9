import * as restate from '@restatedev/restate-sdk';
import { z } from 'zod';
import { ArchonError } from '../../shared/errors';
import { EstopStateSchema, type EstopState } from '../../shared/schemas/estop';
import type { RestateCluster } from './restate-cluster';
import { RUN_SERVICE, STOP_SERVICE, TOOL_SERVICE } from './service-names';
import { isNewer, latest, signed, SignedAtSchema, verified } from './signed';

/**
 * The emergency stop of a whole Restate cluster: one keyed object, its latch. While it is latched,
 * no schedule starts a run, no worker drives one and no worker runs a tool call; latching it also
 * ends every run and tool call under way on the cluster. Only a desk holding the secret sets it.
 */
const KEY = 'cluster';
const LATCH = 'latch';
/** The time of the last latch or re-arm taken: a re-arm no newer (one copied and sent again to lift a later stop) is refused. */
const LAST_CHANGE = 'lastChange';
const SET = `${STOP_SERVICE}/set`;
const ChangeSchema = z.object({ state: EstopStateSchema }).extend(SignedAtSchema.shape);
const UNLATCHED: EstopState = { latched: false, since: null, triggeredBy: null, reason: null };

/** The latch object a worker serves. */
export function stopObject(secret: string) {
  return restate.object({
    name: STOP_SERVICE,
    handlers: {
      set: async (ctx: restate.ObjectContext, input: unknown): Promise<EstopState> => {
        const { state, at } = verified(secret, SET, ctx.key, input, ChangeSchema, 'an emergency stop');
        const last = await ctx.get<string>(LAST_CHANGE);
        // A stop is always taken, whatever the clock of the desk that sent it; only lifting one must be newer.
        if (!state.latched && !isNewer(at, last)) throw new restate.TerminalError(`Refused: a re-arm made at ${at} is not newer than the last stop or re-arm taken (${last}); a message sent again is not taken twice.`);
        ctx.set(LAST_CHANGE, latest(at, last));
        ctx.set(LATCH, state);
        return state;
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
  await setLatch(cluster, secret, state, signal);
  const running = await cluster.query(`SELECT id FROM sys_invocation WHERE target_service_name IN ('${RUN_SERVICE}', '${TOOL_SERVICE}') AND status <> 'completed'`, z.object({ id: z.string() }), signal);
  await Promise.all(running.map((invocation) => cluster.kill(invocation.id, signal)));
  return running.length;
}

/** Re-arms the cluster: runs and schedules start again from their next firing; nothing that was ended restarts. */
export async function resetClusterStop(cluster: RestateCluster, secret: string, signal: AbortSignal): Promise<void> {
  await setLatch(cluster, secret, UNLATCHED, signal);
}

function setLatch(cluster: RestateCluster, secret: string, state: EstopState, signal: AbortSignal): Promise<EstopState> {
  return cluster.call(`${STOP_SERVICE}/${KEY}/set`, signed(secret, SET, KEY, { state, at: new Date().toISOString() }), null, EstopStateSchema, signal);
}
