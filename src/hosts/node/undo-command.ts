import { realpathSync } from 'node:fs';
import { ArchonError } from '../../shared/errors';
import { RESTORE_FILE } from '../../shared/schemas/file-effect';
import type { ArchonRuntime } from '../../core/runtime';
import { childProcessLauncher } from '../../core/process/child-process-launcher';
import { foldersHiddenFromTools } from '../../core/tools/hidden-folders';
import { ToolWorkerPool } from '../../core/tools/tool-worker-pool';
import { applyUndo, previewUndo } from '../../core/undo/run-undo';
import { terminalConfirmation } from './terminal-confirmation';
import { APP_ROOT, EXECUTOR_ENTRY } from './run-command';

export interface UndoFlags {
  yes?: boolean;
}

/**
 * `archon undo RUN_ID`: shows what reverting the run's file writes will change, asks (or takes
 * --yes), then reverts them last first. Exit 0 when every write was reverted, 1 when some were refused.
 */
export async function undoFromCli(runtime: ArchonRuntime, reference: string, flags: UndoFlags): Promise<number> {
  const runId = runtime.store.runs.resolveRunId(reference);
  const run = runtime.store.runs.getRun(runId);
  const effects = runtime.store.runs.fileEffects;
  const steps = previewUndo(effects, runId);
  if (!run || steps.length === 0) {
    process.stdout.write(`Run ${runId} has no file changes left to undo.\n`);
    return 0;
  }
  for (const step of steps) process.stdout.write(`${step.action === 'delete' ? 'Delete' : step.action === 'restore' ? 'Restore' : 'Cannot undo'} ${step.path}\n${step.diff}\n`);
  if (!flags.yes && !process.stdin.isTTY) {
    throw new ArchonError('VALIDATION_FAILED', 'Undo asks before it changes files, and there is no terminal to ask on. Run it in a terminal, or pass --yes to revert without asking.');
  }
  const controller = new AbortController();
  const allowed = await terminalConfirmation({ trustUi: flags.yes ?? false }).confirm({ title: `Revert these ${steps.length} file change(s) of run ${runId}?`, changes: steps.map((step) => `${step.action} ${step.path}`) }, controller.signal);
  if (!allowed) {
    process.stdout.write('Nothing was changed.\n');
    return 1;
  }
  const pool = new ToolWorkerPool({
    launcher: childProcessLauncher,
    entry: EXECUTOR_ENTRY,
    workspace: realpathSync(run.options.workspace),
    networkTools: false,
    confinement: { mode: 'on', allowNetwork: false, hidden: foldersHiddenFromTools(runtime.dataDir) },
    readableRoots: [APP_ROOT],
    warm: 0,
  });
  try {
    const outcome = await applyUndo(effects, runId, (input) => pool.call(RESTORE_FILE, input, { signal: controller.signal, timeoutMs: 30_000 }), runtime.now);
    for (const path of outcome.reverted) process.stdout.write(`Reverted ${path}\n`);
    for (const { path, reason } of outcome.refused) process.stdout.write(`Not reverted: ${path}: ${reason}\n`);
    return outcome.refused.length === 0 ? 0 : 1;
  } finally {
    await pool.close();
  }
}
