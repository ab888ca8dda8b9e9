import { ArchonError } from '../../shared/errors';
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

/** One process drives a run: its PID and a heartbeat in archon.db; another live holder is refused by name. */
export function leaseRun(runs: RunStore, runId: string, now: () => number = Date.now): RunLease {
  const taken = runs.acquireLease(runId, process.pid, now(), LEASE_STALE_MS, (pid) => processRunning(pid));
  if (!taken.ok) {
    throw new ArchonError('RUN_LEASED', `Run ${runId} is being driven by another Archon process (PID ${taken.pid}). Wait for it to end, or stop it (\`archon stop ${runId}\`), then resume.`, {
      details: { pid: taken.pid },
    });
  }
  let lost: (error: ArchonError) => void = () => undefined;
  let control: ((control: RunControl) => void) | null = null;
  const timer = setInterval(() => {
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
      lost(new ArchonError('RUN_LEASED', `Run ${runId} was taken over by another Archon process while this one was stalled; this one stopped driving it.`));
    }
  }, LEASE_HEARTBEAT_MS);
  timer.unref();
  return {
    onLost(listener) {
      lost = listener;
    },
    onControl(listener) {
      control = listener;
    },
    release() {
      clearInterval(timer);
      try {
        runs.releaseLease(runId, process.pid);
      } catch {
        // Released by staleness instead: this process is ending.
      }
    },
  };
}
