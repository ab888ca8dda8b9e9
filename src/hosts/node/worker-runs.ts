import { randomUUID } from 'node:crypto';
import { approveAll, denyAll, type ApprovalChannel } from '../../core/approval/approval-channel';
import { insideFolder } from '../../core/authority/widening-changes';
import { dataDirId } from '../../auditor/audit-key';
import { ClusterApprovals, withdrawRunApprovals } from '../../core/restate/cluster-approvals';
import { clusterLatch, clusterStopError } from '../../core/restate/cluster-stop';
import { heldRowKeys, holdRun, readHeldRun, type TakenRun } from '../../core/restate/run-log';
import { replicateRun, sentFromHere, sentSoFar, type SentSoFar } from '../../core/restate/run-replica';
import type { RestateCluster } from '../../core/restate/restate-cluster';
import type { RunOrderApprove } from '../../shared/schemas/run-order';
import { launchRun, refuseRun } from '../../core/agent/run-launcher';
import { composeRunServices } from '../../core/composition';
import type { RunDriver, DispatchedRun } from '../../core/restate/run-service';
import { runOptionsFrom } from '../../core/run/run-options';
import type { ArchonRuntime } from '../../core/runtime';
import { commandLineApiKeys } from '../../core/secrets/api-key-source';
import type { UndoWorkers } from '../../core/tools/file-restorer';
import { refuseWorkspaceInArchon } from '../../core/tools/hidden-folders';
import { sleep } from '../../shared/abort';
import { ArchonError } from '../../shared/errors';
import { heartbeatLeasesNow } from '../../core/run/run-lease';
import type { RunStore } from '../../core/store/run-store';
import type { EstopState } from '../../shared/schemas/estop';
import { resolveModelUrl } from '../../shared/model-presets';
import { ENDED_RUN_STATUSES, type RunControl, type RunStatus } from '../../shared/schemas/run';
import { engineLauncher } from './engine-launcher';

/** How long an attempt that lost its run waits for Restate to close it before it gives its drive back as failed (to be tried again). */
const STALE_ATTEMPT_MS = 60_000;
/** How long a worker whose attempt ended asks the cluster whether its stop is latched. */
const LATCH_ASK_MS = 5000;
const LATCH_ASKS = 3;

/** The cluster's latch, asked a few times; null when it could not be read. */
async function latchOf(worker: WorkerRunsOptions): Promise<EstopState | null> {
  for (let ask = 0; ask < LATCH_ASKS; ask++) {
    const latch = await clusterLatch(worker.cluster, AbortSignal.timeout(LATCH_ASK_MS)).catch(() => null);
    if (latch) return latch;
  }
  return null;
}

/**
 * The attempt ending: the cluster's emergency stop (which ends every run's attempt) stops the run;
 * otherwise (this worker stopping, its connection lost) the run is left as it stands, neither stopped
 * nor paused, and Restate's next attempt, here or on another worker, goes on with it. A latch that
 * cannot be read is no stop: the run is left for `archon resume` if no attempt comes.
 */
function attemptSignal(attempt: AbortSignal, worker: WorkerRunsOptions, log: ArchonRuntime['log']): AbortSignal {
  const run = new AbortController();
  const end = async () => {
    const latch = await latchOf(worker);
    if (!latch) log.warn({ worker: worker.id }, "a run's attempt ended and the cluster's latch could not be read: the run is left as it stands");
    run.abort(latch?.latched ? clusterStopError(latch, worker.cluster) : new ArchonError('RUN_LEASED', `Worker ${worker.id} ended its attempt at the run; the next attempt goes on with it.`));
  };
  if (attempt.aborted) void end();
  else attempt.addEventListener('abort', () => void end(), { once: true });
  return run.signal;
}

/** Why a run may not use `workspace` on this worker: outside its --workspace, or where tools must never look. */
function workspaceRefusal(worker: WorkerRunsOptions, workspace: string, dataDir: string): ArchonError | null {
  if (!insideFolder(worker.workspace, workspace)) return new ArchonError('CONFIG_INVALID', `The run's workspace ${workspace} is outside worker ${worker.id}'s --workspace ${worker.workspace}: a worker's tools touch only its own workspace.`);
  try {
    refuseWorkspaceInArchon(workspace, dataDir);
    return null;
  } catch (error) {
    return error as ArchonError;
  }
}

export interface WorkerRunsOptions {
  id: string;
  cluster: RestateCluster;
  secret: string;
  /** The worker's own workspace: a run's, when its order names none. */
  workspace: string;
  workers: UndoWorkers;
  allowNetwork?: boolean;
}

function approvalsOf(approve: RunOrderApprove, worker: WorkerRunsOptions): ApprovalChannel {
  if (approve === 'desk') return new ClusterApprovals(worker.cluster, worker.secret);
  return approve === 'auto' ? approveAll : denyAll;
}

/**
 * How a worker drives the runs the cluster sends it (a schedule's firings, `run --detach`): in this
 * process, on its data dir (where the auditor follows them and `archon runs` and the inbox list
 * them), its tools in its own sandbox, its model key from OPENAI_API_KEY. Nobody is at a terminal:
 * the order's rule answers every approval, or each waits for a person at a desk (`archon approve`).
 * The run is held on the cluster while it goes (see run-log.ts): a worker on another data dir goes on
 * from what the cluster holds.
 */
export function workerRunDriver(runtime: ArchonRuntime, worker: WorkerRunsOptions): RunDriver {
  return {
    now: runtime.now,
    async drive(runId: string, run: DispatchedRun, signal: AbortSignal): Promise<RunStatus> {
      const holder = { dataDir: dataDirId(runtime.dataDir), worker: worker.id, attempt: randomUUID() };
      const taken = await holdRun(worker.cluster, worker.secret, runId, holder, signal);
      const sent = await takeUp(runtime, worker, runId, taken, signal);
      const lost = new AbortController();
      const stop = deskStop(runtime.store.runs, runId);
      if (taken.stop) stop.ask(taken.stop);
      const source = { events: (seq: number, limit: number) => runtime.store.runs.events(runId, limit, seq), rows: () => runtime.store.runs.rows.read(runId) };
      const replica = replicateRun(worker.cluster, worker.secret, runId, holder, source, sent, runtime.log, { taken: (error) => lost.abort(error), stopAsked: stop.ask });
      // A run this attempt cannot hold on the cluster is left as it stands, for the next attempt: this one stops at once.
      const replicate = async (within: AbortSignal) => {
        try {
          await replica.sync(within);
        } catch (error) {
          // The run stopped while its call waited (a person's stop, a step's failure): no failure to hold it.
          if (within.aborted) throw within.reason;
          const cut = ArchonError.isInstance(error) && error.code === 'RUN_LEASED' ? error : new ArchonError('RUN_LEASED', `Run ${runId} could not be held on the cluster (${error instanceof Error ? error.message : String(error)}); worker ${worker.id} stopped driving it, and the next attempt goes on with it.`, { cause: error });
          lost.abort(cut);
          throw cut;
        }
      };
      try {
        const status = await driveOnce(runtime, worker, runId, run, { attempt: AbortSignal.any([signal, lost.signal]), replicate, created: stop.created });
        if (!lost.signal.aborted) return status;
        // Stopped from under it, this attempt's end is no end of the run. Restate, which gave the run to another attempt, closes this one:
        // it is not tried again from here meanwhile, which would take the run back from the other.
        await sleep(STALE_ATTEMPT_MS, signal).catch(() => undefined);
        throw lost.signal.reason;
      } finally {
        await replica.close();
      }
    },
  };
}

/**
 * A stop a person asked from a desk through the cluster (`archon stop` with its flags): written where
 * the run's lease reads every stop asked of it, at once, or once the run exists.
 */
function deskStop(runs: RunStore, runId: string): { ask(stop: RunControl): void; created(): void } {
  let asked: RunControl | null = null;
  // Asked again with each send until the run ends: a lease taken after it was written clears a stop asked of an earlier process.
  const apply = () => {
    const status = runs.getRun(runId)?.summary.status;
    if (asked === null || status === undefined || ENDED_RUN_STATUSES.has(status) || runs.controlRequest(runId) !== null) return;
    runs.requestControl(runId, asked);
    heartbeatLeasesNow();
  };
  return {
    ask(stop) {
      asked = stop;
      apply();
    },
    created: apply,
  };
}

/**
 * Where this attempt goes on from, decided by what the cluster's log holds and where it came from
 * last: the log itself, taken in, when this data dir has no record of the run; this data dir's own
 * record when the log came from here (or holds nothing yet). A record of its own that the log went
 * past on another data dir is not gone on from (that could repeat what the other did): refused.
 */
async function takeUp(runtime: ArchonRuntime, worker: WorkerRunsOptions, runId: string, taken: TakenRun, signal: AbortSignal): Promise<SentSoFar> {
  const existing = runtime.store.runs.getRun(runId);
  if (existing === null && (taken.rows > 0 || taken.lastSeq > 0)) {
    const held = await readHeldRun(worker.cluster, worker.secret, runId, taken, signal);
    runtime.store.runs.rows.adopt(runId, held.rows, held.events);
    runtime.log.info({ runId, from: taken.previous?.worker ?? null, worker: worker.id }, "took a run up from the cluster's log of it, which came from another data dir");
    return sentSoFar(held);
  }
  if (existing === null || taken.source === null || taken.source === dataDirId(runtime.dataDir)) return sentFromHere(taken, await heldRowKeys(worker.cluster, runId, taken, signal));
  throw new ArchonError(
    'RUN_LEASED',
    `Run ${runId} went on on another data dir after ${runtime.dataDir}'s record of it${taken.previous ? ` (worker ${taken.previous.worker} held it last)` : ''}; worker ${worker.id} does not go on from its older record, which could repeat what was done since. ` +
      `The next attempt, on a worker without a record of its own, takes it up from the cluster; or resume it where it went on (archon resume ${runId} --data-dir followed by that data dir).`,
  );
}

/** One attempt at a run the cluster sent: it is begun, gone on with, refused, or found ended. */
async function driveOnce(runtime: ArchonRuntime, worker: WorkerRunsOptions, runId: string, run: DispatchedRun, how: { attempt: AbortSignal; replicate(signal: AbortSignal): Promise<void>; created(): void }): Promise<RunStatus> {
    const existing = runtime.store.runs.getRun(runId);
    // A replay after the run ended, before the end was journaled: how it ended (a paused run waits for the operator).
    if (existing && ENDED_RUN_STATUSES.has(existing.summary.status)) return existing.summary.status;
    if (existing && !existing.options.dispatch) throw new ArchonError('CONFIG_INVALID', `Run ${runId} on ${runtime.dataDir} was not sent to this cluster: a worker goes on only with runs the cluster sent it.`);
    const settings = runtime.store.settingsForRun();
    // Its tool calls run here, in this worker's sandbox, whatever the data dir's Settings say of a cluster.
    const options = runOptionsFrom(settings, { workspace: worker.workspace, ...run.order.options, cluster: null, dispatch: { scheduleId: run.scheduleId, firedAt: run.firedAt } });
    const refusal = workspaceRefusal(worker, existing?.options.workspace ?? options.workspace, runtime.dataDir);
    if (refusal && existing) throw refusal;
    if (existing && run.order.approve === 'desk') await withdrawRunApprovals(worker.cluster, worker.secret, runId, how.attempt);
    const keys = commandLineApiKeys({}, runtime.store.secrets, resolveModelUrl(options.modelUrl));
    const services = composeRunServices({ runtime, workers: worker.workers, apiKeyFor: (url) => keys.keyFor(url), settings: () => settings, allowNetwork: worker.allowNetwork, engineLauncher: engineLauncher() });
    try {
      const launch = { runtime, settings, approvals: approvalsOf(run.order.approve, worker), estop: services.estop, tools: services.toolHost(settings), connect: services.connect, capabilities: services.capabilities, worker: worker.id, replicate: how.replicate, onCreated: how.created };
      if (refusal) {
        refuseRun(launch, { id: runId, goal: run.order.goal, options }, refusal);
        return 'failed';
      }
      const target = existing ? { resume: runId, overrides: {} } : { goal: run.order.goal, options, runId };
      return (await launchRun(launch, target, attemptSignal(how.attempt, worker, runtime.log))).status;
    } finally {
      await services.close();
      runtime.events.flush();
    }
}
