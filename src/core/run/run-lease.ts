import { ArchonError } from '../../shared/errors';
import { sleep } from '../../shared/abort';
import { processRunning } from '../process/process-liveness';
import type { RunControl } from '../../shared/schemas/run';
import type { RunStore } from '../store/run-store';

/** How often a driving process says it is alive, and how old a heartbeat may be before another process takes the run over. */
export const LEASE_HEARTBEAT_MS = 2000;
export const LEASE_STALE_MS = 15_000;

export interface RunLease {
  /** Told when another process has taken the run over (this one was stalled past the stale limit): this one must stop driving it. */
  onLost(listener: (error: ArchonError) => void): void;
  /** Told once when the operator asks, from any process, to stop this run (`archon stop`, the app's Stop run); read with each heartbeat. */
  onControl(listener: (control: RunControl) => void): void;
  release(): void;
}

/** The heartbeats of the leases this process holds. */
const heartbeatsHere = new Set<() => void>();

/** Beats every lease this process holds now, so a stop or pause just requested acts at once rather than at the next heartbeat. */
export function heartbeatLeasesNow(): void {
  for (const beat of [...heartbeatsHere]) beat();
}

/** How long a run waits for a sub-agent's run that another process drives before it pauses, and how often it looks. */
export const LEASE_WAIT_MS = 5 * 60_000;
export const LEASE_POLL_MS = 500;

function leasedError(runId: string, holder: { pid: number; runId: string }): ArchonError {
  const what = holder.runId === runId ? `Run ${runId} is being driven` : `Run ${runId} belongs to the same run tree (a parent and its sub-agents) as run ${holder.runId}, which is being driven`;
  return new ArchonError('RUN_LEASED', `${what} by another Archon process (PID ${holder.pid}); one process drives a whole run tree. Wait for it to end, or stop it (\`archon stop ${holder.runId}\`), then resume.`, {
    details: { pid: holder.pid, runId: holder.runId },
  });
}

/** One process drives a run and its sub-agent tree: its PID and a heartbeat in archon.db; another live holder is refused by name. */
export function leaseRun(runs: RunStore, runId: string, now: () => number = Date.now): RunLease {
  const taken = runs.acquireLease(runId, process.pid, now(), LEASE_STALE_MS, (pid) => processRunning(pid));
  if (!taken.ok) throw leasedError(runId, taken);
  let lost: (error: ArchonError) => void = () => undefined;
  let control: ((control: RunControl) => void) | null = null;
  const beat = () => {
    let held = true;
    try {
      held = runs.heartbeat(runId, process.pid, now());
      const asked = control ? runs.controlRequest(runId) : null;
      if (asked) {
        const tell = control;
        control = null;
        tell?.(asked);
      }
    } catch {
      // A missed heartbeat (a full disk) only lets the lease go stale sooner; the run's own writes report the cause.
    }
    if (!held) {
      clearInterval(timer);
      heartbeatsHere.delete(beat);
      lost(new ArchonError('RUN_LEASED', `Run ${runId} was taken over by another Archon process while this one was stalled; this one stopped driving it.`));
    }
  };
  const timer = setInterval(beat, LEASE_HEARTBEAT_MS);
  timer.unref();
  heartbeatsHere.add(beat);
  return {
    onLost(listener) {
      lost = listener;
    },
    onControl(listener) {
      control = listener;
    },
    release() {
      clearInterval(timer);
      heartbeatsHere.delete(beat);
      try {
        runs.releaseLease(runId, process.pid);
      } catch {
        // Released by staleness instead: this process is ending.
      }
    },
  };
}

/**
 * Takes the run's lease, waiting while another live process holds it (or its tree): looked at every
 * LEASE_POLL_MS, ended by `signal`, and given up after `maxWaitMs` with the holder's RUN_LEASED error.
 */
export async function leaseRunWhenFree(runs: RunStore, runId: string, signal: AbortSignal, maxWaitMs = LEASE_WAIT_MS): Promise<RunLease> {
  let refused: unknown = null;
  for (let tried = 0; tried <= Math.ceil(maxWaitMs / LEASE_POLL_MS); tried++) {
    if (tried > 0) await sleep(LEASE_POLL_MS, signal);
    try {
      return leaseRun(runs, runId);
    } catch (error) {
      if (!ArchonError.isInstance(error) || error.code !== 'RUN_LEASED') throw error;
      refused = error;
    }
  }
  throw refused;
}
