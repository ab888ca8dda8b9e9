import { groupRunning, processStartTicks } from '../process/process-liveness';
import type { RunContext } from './run-context';

/**
 * Tool process groups a dead process left behind would race the resumed run: each one still alive
 * (and still the same process, by its start time) is killed, and said so.
 */
export function killOrphans(context: RunContext): void {
  for (const orphan of context.runs.toolProcesses(context.runId)) {
    // While a group exists its id cannot be reused; a live leader with another start time is another process.
    const leaderTicks = processStartTicks(orphan.pgid);
    const same = orphan.startTicks === null || leaderTicks === null || leaderTicks === orphan.startTicks;
    if (same && groupRunning(orphan.pgid)) {
      try {
        process.kill(-orphan.pgid, 'SIGKILL');
        context.events.append(context.runId, 'tool.orphan_killed', { callId: orphan.callId, pgid: orphan.pgid });
      } catch {
        // It ended on its own in between.
      }
    }
    context.runs.endToolProcesses(context.runId, orphan.callId);
  }
}
