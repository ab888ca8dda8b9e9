import { realpathSync, statSync } from 'node:fs';
import { ArchonError } from '../../shared/errors';
import type { WorkspacePin } from '../../shared/schemas/run';
import type { OperatorConfirmation } from '../authority/operator-authority';
import type { RunStore } from '../store/run-store';

/** The folder at `path` now (symlinks followed): its real path, device and inode; null when there is no folder. */
export function pinOf(path: string): WorkspacePin | null {
  try {
    const stat = statSync(path, { bigint: true });
    return stat.isDirectory() ? { realPath: realpathSync(path), dev: String(stat.dev), ino: String(stat.ino) } : null;
  } catch {
    return null;
  }
}

const described = (pin: WorkspacePin | null) => (pin ? `${pin.realPath} (device ${pin.dev}, inode ${pin.ino})` : 'no folder');

/** What changed since `pin` at `path`, or null when it is still the same folder (wherever it was moved, it is the one confirmed). */
function changeOf(pin: WorkspacePin, path: string): string | null {
  const now = pinOf(path);
  if (now?.dev === pin.dev && now.ino === pin.ino) return null;
  return `its workspace ${path} was ${described(pin)} when the run started, and is now ${described(now)}`;
}

export type PinnedAction = 'resume' | 'undo';

function changedError(runId: string, action: PinnedAction, change: string, path: string): ArchonError {
  const proceed =
    action === 'resume'
      ? `Put that folder back at ${path}, or, if the folder there now is the one you mean, run \`archon resume ${runId}\` at a terminal and confirm it (or pass --workspace ${path}).`
      : `Put that folder back at ${path}, or, if the folder there now is the one you mean, run \`archon undo ${runId}\` at a terminal and confirm it.`;
  return new ArchonError('NOT_CONFIRMED', `Run ${runId} was not ${action === 'resume' ? 'resumed' : 'undone'}: ${change}. Nothing was run or changed in either folder. ${proceed}`, { details: { runId, path } });
}

/**
 * Lets a run's resume or undo act on `path` only when it is the folder pinned when the run started
 * (a run from before pins is pinned now). Another folder there, a link to elsewhere put in its place
 * by another run's command above all, is refused with a typed error: nothing confirmed it.
 */
export function holdWorkspace(runs: RunStore, runId: string, path: string, action: PinnedAction): void {
  const pin = runs.workspacePin(runId);
  if (pin === null) {
    const now = pinOf(path);
    if (now) runs.pinWorkspace(runId, now);
    return;
  }
  const change = changeOf(pin, path);
  if (change !== null) throw changedError(runId, action, change, path);
}

/**
 * Where a person can answer (a terminal, the app's dialog), a run's changed workspace is put to them
 * before resume or undo; a yes pins the folder there now. No answer, or a no, refuses it as
 * `holdWorkspace` does: an approval rule (`--approve auto`) never answers this.
 */
export async function confirmWorkspace(runs: RunStore, runId: string, action: PinnedAction, confirmation: OperatorConfirmation, signal: AbortSignal): Promise<void> {
  const path = runs.getRun(runId)?.options.workspace;
  const pin = runs.workspacePin(runId);
  const change = path !== undefined && pin !== null ? changeOf(pin, path) : null;
  if (path === undefined || change === null) return;
  const now = pinOf(path);
  const question = { title: `Run ${runId}'s workspace is not the folder it started in. ${action === 'resume' ? 'Resume it' : 'Undo its writes'} in the folder there now?`, changes: [change] };
  if (now && (await confirmation.confirm(question, signal))) runs.pinWorkspace(runId, now);
  else throw changedError(runId, action, change, path);
}

/** A run's workspace pinned as the folder at `path` now: when a new run starts, or the operator names another on resume. */
export function pinWorkspace(runs: RunStore, runId: string, path: string): void {
  const pin = pinOf(path);
  if (pin) runs.pinWorkspace(runId, pin);
}
