import { useEffect, useId, useRef, useState } from 'react';
import { revertsFile, type UndoOutcome, type UndoStep } from '../../../../shared/schemas/file-effect';
import type { RunSummary } from '../../../../shared/schemas/run';
import { useFocusReturn } from '../../focus-return';
import { useAppStore } from '../../store/use-app-store';

const VERB = { restore: 'Restore', delete: 'Delete', cannot: 'Cannot undo', changed: 'Leave' } as const;

const LINE_CLASS: Record<string, string> = { '+': 'diff-added', '-': 'diff-removed', '@': 'diff-hunk' };

/** A unified diff, each added and removed line marked by its sign and its color; the file headers are left out. */
function Diff({ text }: { text: string }) {
  const all = text.split('\n');
  const lines = all.slice(Math.max(0, all.findIndex((line) => line.startsWith('@@'))));
  return (
    <pre className="action undo-diff" tabIndex={0}>
      {lines.map((line, index) => (
        <span key={index} className={LINE_CLASS[line.charAt(0)]}>
          {line}
          {'\n'}
        </span>
      ))}
    </pre>
  );
}

function UndoStepView({ step }: { step: UndoStep }) {
  return (
    <details open>
      <summary>
        {VERB[step.action]} {step.path}
      </summary>
      {revertsFile(step) ? <Diff text={step.diff} /> : <p className="undo-left">{step.diff}.</p>}
    </details>
  );
}

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
  useFocusReturn(true);

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
        {!outcome && steps?.map((step, index) => <UndoStepView key={`${index}-${step.path}`} step={step} />)}
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
          {!outcome && steps?.some(revertsFile) && (
            <button type="button" className="danger" disabled={busy} onClick={() => void revert()}>
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
