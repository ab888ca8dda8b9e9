import { useEffect, useId, useRef, useState } from 'react';
import { ENDED_RUN_STATUSES, type RunStatus, type RunSummary } from '../../../../shared/schemas/run';
import { inAppTerms } from '../../../../shared/app-advice';
import { useFocusReturn } from '../../focus-return';
import { useAppStore } from '../../store/use-app-store';
import { FollowUpOf } from './follow-up-of';
import { formatSeconds, shownRun, type ShownRun } from './live-summary';
import { historyRows } from './run-history';
import { UndoDialog } from './undo-dialog';
import { useLiveInputs } from './use-live-run';

/** Runs that have ended (a paused one has not finished): they can be continued by a follow-up, and their file changes undone. */
const FINISHED: ReadonlySet<RunStatus> = new Set([...ENDED_RUN_STATUSES].filter((status) => status !== 'paused'));
/** Ended runs that Resume takes up again. */
const RESUMABLE = new Set(['stopped', 'paused', 'failed', 'budget_exhausted']);

/** Tokens, cost and time of a run as its card and its header both say them. */
function figuresText(shown: ShownRun): string {
  const tokens = `${shown.tokens.toLocaleString('en-US')} tok${shown.withSubAgents ? ' with sub-agents' : ''}`;
  return `${formatSeconds(shown.seconds)} · ${tokens} · ${shown.priceKnown ? `$${shown.costUsd.toFixed(4)}` : 'price unknown'}`;
}

/** Pause and Stop for a run that goes; what they were asked shows until the run ends. */
export function RunControls({ runId, goal, shown, named }: { runId: string; goal: string; shown: ShownRun; named: 'header' | 'card' }) {
  const pauseRun = useAppStore((state) => state.pauseRun);
  const stopRun = useAppStore((state) => state.stopRun);
  const label = (verb: string) => (named === 'header' ? undefined : `${verb} run ${goal}`);
  const word = (verb: string) => (named === 'header' ? `${verb} run` : verb);
  return (
    <>
      <button type="button" aria-label={shown.control === 'pause' ? undefined : label('Pause')} disabled={shown.control !== null} onClick={() => void pauseRun(runId)}>
        {shown.control === 'pause' ? 'Pausing…' : word('Pause')}
      </button>
      <button type="button" aria-label={shown.control === 'stop' ? undefined : label('Stop')} disabled={shown.control !== null} onClick={() => void stopRun(runId)}>
        {shown.control === 'stop' ? 'Stopping…' : word('Stop')}
      </button>
    </>
  );
}

/** Asks before a run and its record are deleted; Cancel (or Escape) leaves it, and focus goes back to where it was. */
function DeleteDialog({ run, onClose }: { run: RunSummary; onClose(): void }) {
  const deleteRun = useAppStore((state) => state.deleteRun);
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useFocusReturn(true);
  useEffect(() => dialog.current?.showModal(), []);
  return (
    <dialog ref={dialog} className="modal confirm-delete" aria-labelledby={titleId} onClose={onClose}>
      <h2 id={titleId}>Delete run?</h2>
      <p>
        Run {run.id.slice(0, 8)}: {run.goal}. Its steps, events and approvals are deleted; files it wrote stay.
      </p>
      <div className="dialog-actions">
        <button type="button" onClick={() => dialog.current?.close()}>
          Cancel
        </button>
        <button
          type="button"
          className="danger"
          onClick={() => {
            dialog.current?.close();
            void deleteRun(run.id);
          }}
        >
          Delete run
        </button>
      </div>
    </dialog>
  );
}

/** One run in the history: the button that opens it, named by its goal and status, described by its figures and answer. */
function RunCard({ run, depth, shown, selected }: { run: RunSummary; depth: number; shown: ShownRun; selected: boolean }) {
  const selectRun = useAppStore((state) => state.selectRun);
  const infoId = useId();
  const outcome = run.answer ?? (run.error ? inAppTerms(run.error) : null);
  return (
    <>
      <button type="button" className="run-open" aria-current={selected ? 'true' : undefined} aria-describedby={infoId} onClick={() => void selectRun(run.id)}>
        {depth > 0 && <span className="run-meta">Sub-agent run</span>}
        <span className="run-goal">{run.goal}</span>
        <span className={`status status-${shown.status}${shown.control ? ' status-control' : ''}`}>{shown.statusText}</span>
      </button>
      <p className="run-info" id={infoId}>
        <span className="run-meta">{figuresText(shown)}</span>
        {run.followUpOf && <FollowUpOf runId={run.followUpOf} />}
        {outcome && <span className="run-answer">{outcome}</span>}
      </p>
    </>
  );
}

/** Run history: status, duration, cost, answer; open, pause or stop a run that goes, resume an interrupted one, delete an ended one. */
export function RunList() {
  const inputs = useLiveInputs();
  const selectedRunId = useAppStore((state) => state.selectedRunId);
  const resumeRun = useAppStore((state) => state.resumeRun);
  const latched = useAppStore((state) => state.estop.latched);
  const setFollowUp = useAppStore((state) => state.setFollowUp);
  const [undoing, setUndoing] = useState<RunSummary | null>(null);
  const [deleting, setDeleting] = useState<RunSummary | null>(null);
  if (inputs.runs.length === 0) return <p className="empty">No runs yet.</p>;
  return (
    <ul className="run-list" aria-label="Run history">
      {historyRows(inputs.runs).map(({ run, depth }) => {
        const shown = shownRun(inputs, run);
        const selected = run.id === selectedRunId;
        const ended = ENDED_RUN_STATUSES.has(shown.status);
        const { interrupted } = shown;
        return (
          <li key={run.id} className={[selected ? 'selected' : '', depth > 0 ? 'subagent-run' : ''].join(' ').trim() || undefined} style={depth > 0 ? { marginLeft: `${depth * 16}px` } : undefined}>
            <RunCard run={run} depth={depth} shown={shown} selected={selected} />
            <div className="run-actions">
              {!ended && !interrupted && <RunControls runId={run.id} goal={run.goal} shown={shown} named="card" />}
              {(interrupted || RESUMABLE.has(shown.status)) && (
                <button type="button" disabled={latched} onClick={() => void resumeRun(run.id)}>
                  Resume
                </button>
              )}
              {FINISHED.has(shown.status) && (
                <>
                  <button type="button" aria-label={`Continue run ${run.goal}`} onClick={() => setFollowUp({ runId: run.id, goal: run.goal })}>
                    Continue
                  </button>
                  <button type="button" aria-label={`Undo file changes of run ${run.goal}`} onClick={() => setUndoing(run)}>
                    Undo file changes
                  </button>
                </>
              )}
              {ended && (
                <button type="button" aria-label={`Delete run ${run.goal}`} onClick={() => setDeleting(run)}>
                  Delete
                </button>
              )}
            </div>
            {undoing?.id === run.id && <UndoDialog run={undoing} onClose={() => setUndoing(null)} />}
            {deleting?.id === run.id && <DeleteDialog run={deleting} onClose={() => setDeleting(null)} />}
          </li>
        );
      })}
    </ul>
  );
}
