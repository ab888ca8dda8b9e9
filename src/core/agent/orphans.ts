import { groupRunning, processStartTicks } from '../process/process-liveness';
import type { RunContext } from '../run/run-context';

/**
 * Tool process groups a dead process left behind would race the resumed run: each one still alive
 * (and provably the same process, by its leader's start time) is killed, and said so.
 */
export function killOrphans(context: RunContext): void {
  for (const orphan of context.runs.toolProcesses(context.runId)) {
    // Only a group whose leader is provably the process the call started: its id may since belong to
    // anyone (ids wrap), and killing another program's group is worse than leaving a stray.
    const ours = orphan.startTicks !== null && processStartTicks(orphan.pgid) === orphan.startTicks;
    if (ours && groupRunning(orphan.pgid)) {
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
