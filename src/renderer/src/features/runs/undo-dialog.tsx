import { useEffect, useId, useRef, useState } from 'react';
import type { UndoOutcome, UndoStep } from '../../../../shared/schemas/file-effect';
import type { RunSummary } from '../../../../shared/schemas/run';
import { useAppStore } from '../../store/use-app-store';

const VERB = { restore: 'Restore', delete: 'Delete', cannot: 'Cannot undo' } as const;

/**
 * "Undo file changes": what reverting the run's writes will change, last first, as diffs; nothing
 * changes until the operator presses Revert. A file changed since the run is left and reported.
 */
export function UndoDialog({ run, onClose }: { run: RunSummary; onClose(): void }) {
  const client = useAppStore((state) => state.client);
  const refreshRuns = useAppStore((state) => state.refreshRuns);
  const [steps, setSteps] = useState<UndoStep[] | null>(null);
  const [outcome, setOutcome] = useState<UndoOutcome | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const dialog = useRef<HTMLDivElement>(null);
  const titleId = useId();

  useEffect(() => {
    dialog.current?.focus();
    client.commands['runs.undoPreview']({ runId: run.id }).then(setSteps, (error: unknown) => setFailure(String(error instanceof Error ? error.message : error)));
  }, [client, run.id]);

  async function revert() {
    setBusy(true);
    try {
      setOutcome(await client.commands['runs.undo']({ runId: run.id }));
      await refreshRuns();
    } catch (error) {
      setFailure(error instanceof Error ? error.message : String(error));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="modal-backdrop">
      <div ref={dialog} className="modal" role="dialog" aria-modal="true" aria-labelledby={titleId} tabIndex={-1} onKeyDown={(event) => event.key === 'Escape' && onClose()}>
        <h2 id={titleId}>Undo file changes</h2>
        <p className="origin">
          Run {run.id.slice(0, 8)}: {run.goal}
        </p>
        {failure && <p role="alert">{failure}</p>}
        {steps === null && !failure && <p>Loading the changes…</p>}
        {steps?.length === 0 && <p>This run has no file changes left to undo.</p>}
        {!outcome &&
          steps?.map((step, index) => (
            <details key={`${index}-${step.path}`} open>
              <summary>
                {VERB[step.action]} {step.path}
              </summary>
              <pre className="action">{step.diff}</pre>
            </details>
          ))}
        {outcome && (
          <div role="status">
            {outcome.reverted.length > 0 && <p>Reverted: {outcome.reverted.join(', ')}</p>}
            {outcome.refused.map(({ path, reason }) => (
              <p key={path}>
                Not reverted: {path}: {reason}
              </p>
            ))}
          </div>
        )}
        <div className="actions">
          {!outcome && (
            <button type="button" className="danger" disabled={busy || !steps || steps.length === 0} onClick={() => void revert()}>
              Revert
            </button>
          )}
          <button type="button" onClick={onClose}>
            {outcome ? 'Close' : 'Cancel'}
          </button>
        </div>
      </div>
    </div>
  );
}
