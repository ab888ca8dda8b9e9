import { ArchonError } from '../../shared/errors';
import type { ArchonRuntime } from '../../core/runtime';
import { childProcessLauncher } from '../../core/process/child-process-launcher';
import { foldersHiddenFromTools } from '../../core/tools/hidden-folders';
import { previewUndo, revertRun } from '../../core/undo/run-undo';
import { confirmWorkspace } from '../../core/tools/workspace-pin';
import { terminalConfirmation } from './terminal-confirmation';
import { APP_ROOT, EXECUTOR_ENTRY } from './run-command';

export interface UndoFlags {
  yes?: boolean;
}

const VERB = { restore: 'Restore', delete: 'Delete', cannot: 'Cannot undo', changed: 'Leave' } as const;

/**
 * `archon undo RUN_ID`: shows what reverting the run's file writes will change, asks (or takes
 * --yes), then reverts them last first. Exit 0 when every write was reverted, 1 when some were refused.
 */
export async function undoFromCli(runtime: ArchonRuntime, reference: string, flags: UndoFlags): Promise<number> {
  const runId = runtime.store.runs.resolveRunId(reference);
  const steps = previewUndo(runtime.store.runs, runId);
  if (steps.length === 0) {
    process.stdout.write(`Run ${runId} has no file changes left to undo.\n`);
    return 0;
  }
  for (const step of steps) process.stdout.write(`${VERB[step.action]} ${step.path}\n${step.diff}\n`);
  if (!flags.yes && !process.stdin.isTTY) {
    throw new ArchonError('VALIDATION_FAILED', 'Undo asks before it changes files, and there is no terminal to ask on. Run it in a terminal, or pass --yes to revert without asking.');
  }
  const controller = new AbortController();
  await confirmWorkspace(runtime.store.runs, runId, 'undo', terminalConfirmation({ trustUi: false }), controller.signal);
  const question = { title: `Revert these ${steps.length} file change(s) of run ${runId}?`, changes: steps.map((step) => `${VERB[step.action]} ${step.path}`) };
  if (!(await terminalConfirmation({ trustUi: flags.yes ?? false }).confirm(question, controller.signal))) {
    process.stdout.write('Nothing was changed.\n');
    return 1;
  }
  const workers = { launcher: childProcessLauncher, entry: EXECUTOR_ENTRY, readableRoots: [APP_ROOT], hiddenFolders: foldersHiddenFromTools(runtime.dataDir) };
  const outcome = await revertRun(runtime.store.runs, runId, workers, runtime.now, controller.signal);
  for (const path of outcome.reverted) process.stdout.write(`Reverted ${path}\n`);
  for (const { path, reason } of outcome.refused) process.stdout.write(`Not reverted: ${path}: ${reason}\n`);
  return outcome.refused.length === 0 ? 0 : 1;
}
