import { resolve } from 'node:path';
import { ArchonError } from '../../shared/errors';
import type { EstopState } from '../../shared/schemas/estop';
import { latchClusterStop, resetClusterStop } from '../../core/restate/cluster-stop';
import { clusterSecret, RestateCluster } from '../../core/restate/restate-cluster';
import { RESTATE_DEFAULTS } from './command-flags';
import { untilInterrupted } from './interrupt';
import type { ClusterFlags } from './cluster-command';
import { requestRunControl, waitForRunEnd } from '../../core/agent/run-control';
import type { ArchonRuntime } from '../../core/runtime';
import type { RunControlAction, RunStatus } from '../../shared/schemas/run';

/** Exit codes of `archon stop` and `archon pause`: 0 the run ended stopped / paused, 1 it is not running (or did not end in time), 2 no such run. */
export const STOP_EXIT = { stopped: 0, notRunning: 1, unknown: 2 } as const;

const ENDS_AS: Record<RunControlAction, RunStatus> = { stop: 'stopped', pause: 'paused' };

/** `archon stop RUN_ID` / `archon pause RUN_ID`: asks the process driving that one run to stop or pause it, then waits for its end to be stored. The emergency stop stays armed. */
export async function controlRunFromCli(runtime: ArchonRuntime, idOrPrefix: string, action: RunControlAction): Promise<number> {
  let runId: string;
  try {
    ({ runId } = requestRunControl(runtime.store.runs, idOrPrefix, action, `the operator (archon ${action})`));
  } catch (error) {
    if (!ArchonError.isInstance(error) || (error.code !== 'NOT_FOUND' && error.code !== 'VALIDATION_FAILED')) throw error;
    process.stderr.write(`archon: ${error.message}\n`);
    return error.code === 'NOT_FOUND' ? STOP_EXIT.unknown : STOP_EXIT.notRunning;
  }
  process.stdout.write(`Asked run ${runId} to ${action}; waiting for it to end…\n`);
  const status = await untilInterrupted((signal) => waitForRunEnd(runtime.store.runs, runId, signal), new ArchonError('CANCELLED', `Stopped waiting; the ${action} request stays in place.`));
  if (status === null) {
    process.stdout.write(`Run ${runId} has not ended yet; the ${action} request stays in place. \`archon runs\` shows when it does.\n`);
    return STOP_EXIT.notRunning;
  }
  process.stdout.write(`Run ${runId} ended ${status}. The emergency stop was not used; other runs go on.\n`);
  return status === ENDS_AS[action] ? STOP_EXIT.stopped : STOP_EXIT.notRunning;
}

/** How long `archon estop` waits for the cluster (the stop here is latched already). */
const CLUSTER_STOP_TIMEOUT_MS = 15_000;

/**
 * `archon estop` with a cluster's flags: after the data dir's own latch, the same latch on the Restate
 * cluster (every run and tool call under way there ended), or, with `--reset`, the cluster re-armed.
 * An unreachable cluster is said, exit 1: the stop here holds all the same.
 */
export async function clusterEstopFromCli(state: EstopState, flags: ClusterFlags): Promise<number> {
  const cluster = new RestateCluster({ ingress: flags.restateIngress ?? RESTATE_DEFAULTS.ingress, admin: flags.restateAdmin ?? RESTATE_DEFAULTS.admin });
  const signal = AbortSignal.timeout(CLUSTER_STOP_TIMEOUT_MS);
  try {
    const secret = clusterSecret(resolve(flags.clusterSecretFile ?? ''), resolve('.'));
    if (!state.latched) {
      await resetClusterStop(cluster, secret, signal);
      process.stdout.write(`Re-armed the Restate cluster at ${cluster.address.ingress} too. Nothing was restarted; schedules start runs again from their next firing.\n`);
    } else {
      const ended = await latchClusterStop(cluster, secret, state, signal);
      process.stdout.write(`Latched on the Restate cluster at ${cluster.address.ingress} too: ${ended} run${ended === 1 ? '' : 's'} and tool calls under way there ended; no worker starts another until it is re-armed.\n`);
    }
    return 0;
  } catch (error) {
    process.stderr.write(`archon: the Restate cluster at ${cluster.address.ingress} was not ${state.latched ? 'stopped' : 're-armed'}: ${ArchonError.isInstance(error) ? error.message : String(error)} Try again once it answers.\n`);
    return 1;
  }
}
