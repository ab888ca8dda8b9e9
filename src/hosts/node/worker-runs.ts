import { approveAll, denyAll, type ApprovalChannel } from '../../core/approval/approval-channel';
import { insideFolder } from '../../core/authority/widening-changes';
import { dataDirId } from '../../auditor/audit-key';
import { markBegun, releaseBegun } from '../../core/restate/began-marks';
import { ClusterApprovals, withdrawRunApprovals } from '../../core/restate/cluster-approvals';
import { clusterLatch, clusterStopError } from '../../core/restate/cluster-stop';
import { publishRunLog } from '../../core/restate/run-log';
import type { RestateCluster } from '../../core/restate/restate-cluster';
import { RUN_MARKS } from '../../core/restate/service-names';
import type { RunOrderApprove } from '../../shared/schemas/run-order';
import { launchRun, refuseRun } from '../../core/agent/run-launcher';
import { composeRunServices } from '../../core/composition';
import type { RunDriver, DispatchedRun } from '../../core/restate/run-service';
import { runOptionsFrom } from '../../core/run/run-options';
import type { ArchonRuntime } from '../../core/runtime';
import { commandLineApiKeys } from '../../core/secrets/api-key-source';
import type { UndoWorkers } from '../../core/tools/file-restorer';
import { refuseWorkspaceInArchon } from '../../core/tools/hidden-folders';
import { ArchonError } from '../../shared/errors';
import type { EstopState } from '../../shared/schemas/estop';
import { resolveModelUrl } from '../../shared/model-presets';
import { ENDED_RUN_STATUSES, type RunStatus } from '../../shared/schemas/run';
import { engineLauncher } from './engine-launcher';

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

/** What a worker marks a run with: its data dir's id (which moves with the folder, and is where the run stands), then its own id. */
function runMarker(worker: WorkerRunsOptions, dataDir: string): string {
  return `${dataDirId(dataDir)} ${worker.id}`;
}

/**
 * A run a worker on another data dir may have begun, whose state would be there, not here: not
 * started again here, which could repeat what it did. Marked before a run begins, so the next attempt
 * knows; the mark is taken back when the run never began (`releaseBegun`).
 */
async function beganElsewhere(worker: WorkerRunsOptions, dataDir: string, runId: string, signal: AbortSignal): Promise<ArchonError | null> {
  const began = await markBegun(worker.cluster, worker.secret, RUN_MARKS, runId, runMarker(worker, dataDir), signal);
  if (began === null) return null;
  const space = began.indexOf(' ');
  const [theirDir, theirWorker] = space < 0 ? [began, 'an earlier worker'] : [began.slice(0, space), began.slice(space + 1)];
  if (theirDir === dataDirId(dataDir)) return null;
  return new ArchonError(
    'RUN_LEASED',
    `Run ${runId} began on worker ${theirWorker}, on a data dir that worker ${worker.id} does not share, where the run stands; it was not started again here, which could repeat what it did. ` +
      `Resume it on that worker's machine: archon resume ${runId} --data-dir followed by that worker's data dir. Or give the workers one data dir (docs/scale-out.md).`,
  );
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
 */
export function workerRunDriver(runtime: ArchonRuntime, worker: WorkerRunsOptions): RunDriver {
  return {
    now: runtime.now,
    async drive(runId: string, run: DispatchedRun, signal: AbortSignal): Promise<RunStatus> {
      // Desks on other machines follow the run from the cluster (`archon follow`): each attempt sends all it has, even one that finds the run ended.
      const published = publishRunLog(worker.cluster, worker.secret, runId, (seq, limit) => runtime.store.runs.events(runId, limit, seq), runtime.log);
      try {
        return await driveOnce(runtime, worker, runId, run, signal);
      } finally {
        await published.close();
      }
    },
  };
}

/** One attempt at a run the cluster sent: it is begun, gone on with, refused, or found ended. */
async function driveOnce(runtime: ArchonRuntime, worker: WorkerRunsOptions, runId: string, run: DispatchedRun, signal: AbortSignal): Promise<RunStatus> {
    const existing = runtime.store.runs.getRun(runId);
    // A replay after the run ended, before the end was journaled: how it ended (a paused run waits for the operator).
    if (existing && ENDED_RUN_STATUSES.has(existing.summary.status)) return existing.summary.status;
    if (existing && !existing.options.dispatch) throw new ArchonError('CONFIG_INVALID', `Run ${runId} on ${runtime.dataDir} was not sent to this cluster: a worker goes on only with runs the cluster sent it.`);
    const settings = runtime.store.settingsForRun();
    // Its tool calls run here, in this worker's sandbox, whatever the data dir's Settings say of a cluster.
    const options = runOptionsFrom(settings, { workspace: worker.workspace, ...run.order.options, cluster: null, dispatch: { scheduleId: run.scheduleId, firedAt: run.firedAt } });
    const refusal = workspaceRefusal(worker, options.workspace, runtime.dataDir) ?? (existing ? null : await beganElsewhere(worker, runtime.dataDir, runId, signal));
    if (refusal && existing) throw refusal;
    if (existing && run.order.approve === 'desk') await withdrawRunApprovals(worker.cluster, worker.secret, runId, signal);
    const keys = commandLineApiKeys({}, runtime.store.secrets, resolveModelUrl(options.modelUrl));
    const services = composeRunServices({ runtime, workers: worker.workers, apiKeyFor: (url) => keys.keyFor(url), settings: () => settings, allowNetwork: worker.allowNetwork, engineLauncher: engineLauncher() });
    try {
      let created = existing !== null;
      const launch = { runtime, settings, approvals: approvalsOf(run.order.approve, worker), estop: services.estop, tools: services.toolHost(settings), connect: services.connect, capabilities: services.capabilities, worker: worker.id, onCreated: () => (created = true) };
      if (refusal) {
        refuseRun(launch, { id: runId, goal: run.order.goal, options }, refusal);
        return 'failed';
      }
      const target = existing ? { resume: runId, overrides: {} } : { goal: run.order.goal, options, runId };
      try {
        return (await launchRun(launch, target, attemptSignal(signal, worker, runtime.log))).status;
      } catch (error) {
        // It never began (its model server did not answer, this worker stopping): the next attempt, on any data dir, may begin it.
        if (!created) await releaseBegun(worker.cluster, worker.secret, RUN_MARKS, runId, runMarker(worker, runtime.dataDir), AbortSignal.timeout(LATCH_ASK_MS)).catch(() => undefined);
        throw error;
      }
    } finally {
      await services.close();
      runtime.events.flush();
    }
}
