import { ArchonError } from '../../shared/errors';
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
  const controller = new AbortController();
  const cancel = () => controller.abort(new ArchonError('CANCELLED', `Stopped waiting; the ${action} request stays in place.`));
  process.once('SIGINT', cancel);
  try {
    const status = await waitForRunEnd(runtime.store.runs, runId, controller.signal);
    if (status === null) {
      process.stdout.write(`Run ${runId} has not ended yet; the ${action} request stays in place. \`archon runs\` shows when it does.\n`);
      return STOP_EXIT.notRunning;
    }
    process.stdout.write(`Run ${runId} ended ${status}. The emergency stop was not used; other runs go on.\n`);
    return status === ENDS_AS[action] ? STOP_EXIT.stopped : STOP_EXIT.notRunning;
  } finally {
    process.off('SIGINT', cancel);
  }
}
