import { useState } from 'react';
import type { RunSummary } from '../../../../shared/schemas/run';
import { inAppTerms } from '../../../../shared/app-advice';
import { useAppStore } from '../../store/use-app-store';
import { statusLabel } from '../contract/contract-model';
import { historyRows } from './run-history';
import { UndoDialog } from './undo-dialog';

function duration(createdAt: string, updatedAt: string): string {
  const seconds = Math.max(0, Math.round((Date.parse(updatedAt) - Date.parse(createdAt)) / 1000));
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** Runs that have ended: they can be continued by a follow-up, and their file changes undone. */
const FINISHED = new Set(['completed', 'completed_with_gaps', 'failed', 'stopped', 'budget_exhausted']);
const RESUMABLE = new Set(['stopped', 'paused', 'failed', 'budget_exhausted', 'running', 'planning', 'pending', 'awaiting_approval']);

/** Run history: status, duration, cost, answer; open, resume an interrupted run, delete. */
export function RunList() {
  const runs = useAppStore((state) => state.runs);
  const selectedRunId = useAppStore((state) => state.selectedRunId);
  const selectRun = useAppStore((state) => state.selectRun);
  const resumeRun = useAppStore((state) => state.resumeRun);
  const deleteRun = useAppStore((state) => state.deleteRun);
  const latched = useAppStore((state) => state.estop.latched);
  const activeRunId = useAppStore((state) => (state.detail?.active ? state.detail.run.id : null));
  const setFollowUp = useAppStore((state) => state.setFollowUp);
  const [undoing, setUndoing] = useState<RunSummary | null>(null);
  if (runs.length === 0) return <p className="empty">No runs yet.</p>;
  return (
    <ul className="run-list" aria-label="Run history">
      {historyRows(runs).map(({ run, depth }) => (
        <li key={run.id} className={[run.id === selectedRunId ? 'selected' : '', depth > 0 ? 'subagent-run' : ''].join(' ').trim() || undefined} style={depth > 0 ? { marginLeft: `${depth * 16}px` } : undefined}>
          <button type="button" className="run-open" aria-current={run.id === selectedRunId ? 'true' : undefined} onClick={() => void selectRun(run.id)}>
            {depth > 0 && <span className="run-meta">Sub-agent run</span>}
            <span className="run-goal">{run.goal}</span>
            <span className={`status status-${run.status}`}>{statusLabel(run.status)}</span>
            <span className="run-meta">
              {duration(run.createdAt, run.updatedAt)} · {run.tokens} tok · {run.priceKnown === false ? 'price unknown' : `$${run.costUsd.toFixed(4)}`}
            </span>
            {(run.answer ?? run.error) && <span className="run-answer">{run.answer ?? inAppTerms(run.error ?? '')}</span>}
          </button>
          <div className="run-actions">
            {RESUMABLE.has(run.status) && run.id !== activeRunId && (
              <button type="button" disabled={latched} onClick={() => void resumeRun(run.id)}>
                Resume
              </button>
            )}
            {FINISHED.has(run.status) && run.id !== activeRunId && (
              <>
                <button type="button" aria-label={`Continue run ${run.goal}`} onClick={() => setFollowUp({ runId: run.id, goal: run.goal })}>
                  Continue
                </button>
                <button type="button" aria-label={`Undo file changes of run ${run.goal}`} onClick={() => setUndoing(run)}>
                  Undo file changes
                </button>
                {undoing?.id === run.id && <UndoDialog run={undoing} onClose={() => setUndoing(null)} />}
              </>
            )}
            {run.id !== activeRunId && (
              <button type="button" aria-label={`Delete run ${run.goal}`} onClick={() => void deleteRun(run.id)}>
                Delete
              </button>
            )}
          </div>
        </li>
      ))}
    </ul>
  );
}
