import { createTwoFilesPatch } from 'diff';
import type { RestoreFileInput } from '../../shared/schemas/file-effect';
import type { ToolResult } from '../../shared/schemas/tool';
import type { StoredFileEffect, FileEffectStore } from '../store/file-effects';

/** One write to revert, last first: restore the previous content, delete a file the run created, or cannot (not kept). */
export interface UndoStep {
  path: string;
  action: 'restore' | 'delete' | 'cannot';
  /** The change undo makes, as a unified diff (from what the run wrote to what was there before). */
  diff: string;
}

export interface UndoOutcome {
  reverted: string[];
  refused: { path: string; reason: string }[];
}

const NOT_KEPT = 'its previous content was larger than 1 MiB and was not kept, so this write cannot be undone';

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
  return effects.pending(runId).map((effect) => ({ path: effect.path, action: actionOf(effect), diff: actionOf(effect) === 'cannot' ? NOT_KEPT : diffOf(effect) }));
}

/**
 * Reverts the run's writes last first (saga compensation) through `restore` (the tool process's
 * confined file layer). A file changed since the run left it is not overwritten: it, and every
 * earlier write of the same file, is reported instead.
 */
export async function applyUndo(effects: FileEffectStore, runId: string, restore: (input: RestoreFileInput) => Promise<ToolResult>, now: () => Date): Promise<UndoOutcome> {
  const outcome: UndoOutcome = { reverted: [], refused: [] };
  const blocked = new Set<string>();
  for (const effect of effects.pending(runId)) {
    if (blocked.has(effect.path)) continue;
    const action = actionOf(effect);
    const result =
      action === 'cannot'
        ? { status: 'denied' as const, content: NOT_KEPT }
        : await restore({ path: effect.path, expectedSha256: effect.newSha256, contentBase64: action === 'delete' ? null : (effect.previous?.toString('base64') ?? '') });
    if (result.status === 'success') {
      effects.markUndone(effect.seq, now().toISOString());
      if (!outcome.reverted.includes(effect.path)) outcome.reverted.push(effect.path);
    } else {
      blocked.add(effect.path);
      outcome.refused.push({ path: effect.path, reason: result.content });
    }
  }
  outcome.reverted = outcome.reverted.filter((path) => !blocked.has(path));
  return outcome;
}
