import { sleep } from '../../shared/abort';
import { ArchonError } from '../../shared/errors';
import { ENDED_RUN_STATUSES, type RunControl, type RunControlAction, type RunStatus, type RunSummary } from '../../shared/schemas/run';
import { processRunning } from '../process/process-liveness';
import type { RunStore } from '../store/run-store';
import { LEASE_HEARTBEAT_MS, LEASE_STALE_MS } from '../run/run-lease';

/** How often `archon stop` / `archon pause` looks whether the run has ended, and how long it waits at most: a few heartbeats and the wind-down. */
const END_POLL_MS = 200;
export const STOP_WAIT_MS = LEASE_HEARTBEAT_MS * 15;

/** The abort reason a run asked to stop or pause sees: it names who asked, and ends the run `stopped` or `paused` (not the emergency stop). */
export function runControlError(runId: string, control: RunControl): ArchonError {
  if (control.action === 'pause') return new ArchonError('PAUSED', `Paused by ${control.by}. \`archon resume ${runId}\` continues it where it paused; completed steps are not redone.`);
  return new ArchonError('CANCELLED', `Stopped by ${control.by}. Only this run was stopped; \`archon resume ${runId}\` continues it.`);
}

/**
 * Asks the process driving one run (this one or another sharing the data dir) to stop or pause it: written to
 * archon.db, read by that process's lease heartbeat. Unknown ids are NOT_FOUND; a run no live process
 * drives is VALIDATION_FAILED, saying its status.
 */
export function requestRunControl(runs: RunStore, idOrPrefix: string, action: RunControlAction, by: string, now: () => number = Date.now): { runId: string } {
  const runId = runs.resolveRunId(idOrPrefix);
  const stored = runs.getRun(runId);
  if (!stored) throw new ArchonError('NOT_FOUND', `There is no run ${idOrPrefix} in this data folder. \`archon runs\` lists the runs.`);
  const driven = runs.leaseHolder(runId, now(), LEASE_STALE_MS, (pid) => processRunning(pid)) !== null;
  if (ENDED_RUN_STATUSES.has(stored.summary.status) || !driven) {
    throw new ArchonError('VALIDATION_FAILED', `Run ${runId} is not running (${stored.summary.status}${driven ? '' : ', no Archon process is driving it'}); there is nothing to ${action}.`);
  }
  runs.requestControl(runId, { action, by });
  return { runId };
}

/** The summary marked `interrupted` when it has not ended and no live process drives it or an ancestor of it (a sub-agent runs in its parent's process). */
export function withDriving(runs: RunStore, summary: RunSummary, now: () => number = Date.now): RunSummary {
  if (ENDED_RUN_STATUSES.has(summary.status)) return summary;
  const lineage = [summary.id, ...runs.ancestorIds(summary.id)];
  const driven = lineage.some((runId) => runs.leaseHolder(runId, now(), LEASE_STALE_MS, (pid) => processRunning(pid)) !== null);
  return driven ? summary : { ...summary, interrupted: true };
}

/** Waits until the run's end is stored; null when it has not ended within `timeoutMs`. */
export async function waitForRunEnd(runs: RunStore, runId: string, signal: AbortSignal, timeoutMs = STOP_WAIT_MS): Promise<RunStatus | null> {
  for (let waited = 0; waited <= timeoutMs; waited += END_POLL_MS) {
    const status = runs.getRun(runId)?.summary.status;
    if (status && ENDED_RUN_STATUSES.has(status)) return status;
    await sleep(END_POLL_MS, signal);
  }
  return null;
}
