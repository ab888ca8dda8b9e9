import { createHash } from 'node:crypto';
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { createTwoFilesPatch } from 'diff';
import { ArchonError } from '../../shared/errors';
import { WRITE_FILE_MAX_CHARS } from '../../shared/tools/catalogue';
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

/** Stands for a file that cannot be read as a workspace file (outside it, unreadable): never the hash a run left. */
const UNREADABLE = 'unreadable';

function sha256(content: Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

/** Stands for a file larger than any write leaves: it was changed since, and is not read to say so. */
const LARGER_THAN_ANY_WRITE = 'larger than any write';
const MAX_WRITTEN_BYTES = WRITE_FILE_MAX_CHARS * 3;

/**
 * The hash of the file as it is now, null when there is none: what revert compares with the hash the run
 * left. Only a regular file inside the workspace is read (a pipe put there would block the host), and
 * only one small enough to be what a write left.
 */
function hashNow(workspace: string | null, path: string): string | null {
  if (workspace === null) return null;
  try {
    const real = realpathSync(join(workspace, path));
    const inside = relative(workspace, real);
    const stat = statSync(real);
    if (inside.startsWith('..') || isAbsolute(inside) || !stat.isFile()) return UNREADABLE;
    return stat.size > MAX_WRITTEN_BYTES ? LARGER_THAN_ANY_WRITE : sha256(readFileSync(real));
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? null : UNREADABLE;
  }
}

function workspaceNow(runs: RunStore, runId: string): string | null {
  const run = runs.getRun(runId);
  if (!run) throw new ArchonError('NOT_FOUND', `There is no run ${runId}.`);
  try {
    return realpathSync(run.options.workspace);
  } catch {
    return null;
  }
}

function changedSince(path: string, current: string | null): string {
  return `${path} was ${current === null ? 'deleted' : 'changed'} since (by a later run or by hand): it will be left as it is`;
}

function stepOf(effect: StoredFileEffect, current: string | null): UndoStep {
  const action = actionOf(effect);
  if (action === 'cannot') return { path: effect.path, action, diff: notKept(effect) };
  if (current !== effect.newSha256) return { path: effect.path, action: 'changed', diff: changedSince(effect.path, current) };
  return { path: effect.path, action, diff: diffOf(effect) };
}

/**
 * What undoing the run would do, in the order it would do it, checked against the files as they are
 * now the way revert checks them: a file changed since the run left it, and its earlier writes, are left.
 */
export function previewUndo(runs: RunStore, runId: string): UndoStep[] {
  const workspace = workspaceNow(runs, runId);
  const afterUndo = new Map<string, string | null>();
  const left = new Set<string>();
  const steps: UndoStep[] = [];
  for (const effect of runs.fileEffects.pending(runId)) {
    if (left.has(effect.path)) continue;
    const step = stepOf(effect, afterUndo.has(effect.path) ? (afterUndo.get(effect.path) ?? null) : hashNow(workspace, effect.path));
    if (step.action === 'cannot' || step.action === 'changed') left.add(effect.path);
    else afterUndo.set(effect.path, effect.previous === null ? null : sha256(effect.previous));
    steps.push(step);
  }
  return steps;
}

/**
 * Reverts the run's writes last first (saga compensation) through `restore` (the tool process's
 * confined file layer). A file changed since the run left it is not overwritten: it, and every
 * earlier write of the same file, is reported instead.
 */
async function applyUndo(effects: FileEffectStore, runId: string, restore: RestoreFile, now: () => Date): Promise<UndoOutcome> {
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
