import { ArchonError } from '../../shared/errors';
import { requestRunStop, waitForRunEnd } from '../../core/agent/run-control';
import type { ArchonRuntime } from '../../core/runtime';

/** Exit codes of `archon stop`: 0 the run ended, 1 it is not running (or did not end in time), 2 no such run. */
export const STOP_EXIT = { stopped: 0, notRunning: 1, unknown: 2 } as const;

/** `archon stop RUN_ID`: asks the process driving that one run to stop it, then waits for its end to be stored. The emergency stop stays armed. */
export async function stopRunFromCli(runtime: ArchonRuntime, idOrPrefix: string): Promise<number> {
  let runId: string;
  try {
    ({ runId } = requestRunStop(runtime.store.runs, idOrPrefix, 'the operator (archon stop)'));
  } catch (error) {
    if (!ArchonError.isInstance(error) || (error.code !== 'NOT_FOUND' && error.code !== 'VALIDATION_FAILED')) throw error;
    process.stderr.write(`archon: ${error.message}\n`);
    return error.code === 'NOT_FOUND' ? STOP_EXIT.unknown : STOP_EXIT.notRunning;
  }
  process.stdout.write(`Asked run ${runId} to stop; waiting for it to end…\n`);
  const controller = new AbortController();
  const cancel = () => controller.abort(new ArchonError('CANCELLED', 'Stopped waiting; the stop request stays in place.'));
  process.once('SIGINT', cancel);
  try {
    const status = await waitForRunEnd(runtime.store.runs, runId, controller.signal);
    if (status === null) {
      process.stdout.write(`Run ${runId} has not ended yet; the stop request stays in place. \`archon runs\` shows when it does.\n`);
      return STOP_EXIT.notRunning;
    }
    process.stdout.write(`Run ${runId} ended ${status}. The emergency stop was not used; other runs go on.\n`);
    return status === 'stopped' ? STOP_EXIT.stopped : STOP_EXIT.notRunning;
  } finally {
    process.off('SIGINT', cancel);
  }
}
