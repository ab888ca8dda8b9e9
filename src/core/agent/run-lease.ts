import { ArchonError } from '../../shared/errors';
import type { RunStore } from '../store/run-store';

/** How often a driving process says it is alive, and how old a heartbeat may be before another process takes the run over. */
export const LEASE_HEARTBEAT_MS = 2000;
export const LEASE_STALE_MS = 15_000;

export interface RunLease {
  release(): void;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** One process drives a run: its PID and a heartbeat in archon.db; another live holder is refused by name. */
export function leaseRun(runs: RunStore, runId: string, now: () => number = Date.now): RunLease {
  const taken = runs.acquireLease(runId, process.pid, now(), LEASE_STALE_MS, isAlive);
  if (!taken.ok) {
    throw new ArchonError('RUN_LEASED', `Run ${runId} is being driven by another Archon process (PID ${taken.pid}). Wait for it to end, or stop it (\`archon estop\`), then resume.`, {
      details: { pid: taken.pid },
    });
  }
  const timer = setInterval(() => {
    try {
      runs.heartbeat(runId, process.pid, now());
    } catch {
      // A missed heartbeat (a full disk) only lets the lease go stale sooner; the run's own writes report the cause.
    }
  }, LEASE_HEARTBEAT_MS);
  timer.unref();
  return {
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
