import { realpathSync } from 'node:fs';
import { createTwoFilesPatch } from 'diff';
import { ArchonError } from '../../shared/errors';
import type { RestoreFileInput, UndoOutcome, UndoStep } from '../../shared/schemas/file-effect';
import type { StoredFileEffect, FileEffectStore } from '../store/file-effects';
import type { RunStore } from '../store/run-store';
import { withFileRestorer, type RestoreFile, type UndoWorkers } from '../tools/file-restorer';
import { holdWorkspace } from '../tools/workspace-pin';

const NOT_KEPT = 'its previous content was larger than 1 MiB and was not kept, so this write cannot be undone';

function notKept(effect: StoredFileEffect): string {
  return effect.withheld ?? NOT_KEPT;
}

function actionOf(effect: StoredFileEffect): UndoStep['action'] {
  if (!effect.existed) return 'delete';
  return effect.previous === null ? 'cannot' : 'restore';
}

function diffOf(effect: StoredFileEffect): string {
  const before = effect.previous?.toString('utf8') ?? '';
  return createTwoFilesPatch(`${effect.path} (as the run left it)`, `${effect.path} (${effect.existed ? 'before the run' : 'deleted'})`, effect.written ?? '', before);
}

/** What undoing the run would do, in the order it would do it. */
export function previewUndo(effects: FileEffectStore, runId: string): UndoStep[] {
  return effects.pending(runId).map((effect) => ({ path: effect.path, action: actionOf(effect), diff: actionOf(effect) === 'cannot' ? notKept(effect) : diffOf(effect) }));
}

/**
 * Reverts the run's writes last first (saga compensation) through `restore` (the tool process's
 * confined file layer). A file changed since the run left it is not overwritten: it, and every
 * earlier write of the same file, is reported instead.
 */
export async function applyUndo(effects: FileEffectStore, runId: string, restore: RestoreFile, now: () => Date): Promise<UndoOutcome> {
  const reverted = new Set<string>();
  const refused: UndoOutcome['refused'] = [];
  const blocked = new Set<string>();
  for (const effect of effects.pending(runId)) {
    if (blocked.has(effect.path)) continue;
    const action = actionOf(effect);
    const result =
      action === 'cannot'
        ? { status: 'denied' as const, content: notKept(effect) }
        : await restore({ path: effect.path, expectedSha256: effect.newSha256, contentBase64: action === 'delete' ? null : (effect.previous?.toString('base64') ?? '') });
    if (result.status === 'success') {
      effects.markUndone(effect.seq, now().toISOString());
      reverted.add(effect.path);
    } else {
      blocked.add(effect.path);
      refused.push({ path: effect.path, reason: result.content });
    }
  }
  return { reverted: [...reverted].filter((path) => !blocked.has(path)), refused };
}

/**
 * Reverts a finished run's writes through a tool process of its own (the runtime never writes
 * workspace files itself). `signal` ends it: the tool process is killed and it throws the signal's reason.
 */
export async function revertRun(runs: RunStore, runId: string, workers: UndoWorkers, now: () => Date, signal: AbortSignal): Promise<UndoOutcome> {
  const run = runs.getRun(runId);
  if (!run) throw new ArchonError('NOT_FOUND', `There is no run ${runId}.`);
  holdWorkspace(runs, runId, run.options.workspace, 'undo');
  return withFileRestorer(workers, realpathSync(run.options.workspace), signal, (restoreFile) => {
    const restore = async (input: RestoreFileInput) => {
      const result = await restoreFile(input);
      // A restore the stop ended is no refusal of that file: the whole undo ends, the writes not reached stay to undo.
      if (result.status !== 'success') signal.throwIfAborted();
      return result;
    };
    return applyUndo(runs.fileEffects, runId, restore, now);
  });
}
