import { useId, useState, type ReactNode } from 'react';
import { EscalationActionSchema, type ApprovalRequest, type EscalationAction, type EscalationChoice } from '../../../../shared/schemas/approval';
import { formatTrend } from '../validation/validation-model';
import { ConfirmOrCancel } from './confirm-or-cancel';

function EvidenceList({ evidence }: { evidence: EscalationAction }) {
  const { attempts, verdicts, gapTrend } = evidence;
  return (
    <dl className="explanation escalation-evidence" aria-label="Escalation evidence">
      <dt>Step</dt>
      <dd>
        {evidence.stepId}: {evidence.description}
      </dd>
      <dt>Failure</dt>
      <dd>{evidence.reason}</dd>
      <dt>Failed attempts</dt>
      <dd>
        {attempts.length === 0 ? (
          'none recorded'
        ) : (
          <ol aria-label="Failed attempts">
            {attempts.map((attempt, index) => (
              <li key={index}>
                {attempt.stepId}: {attempt.reason}
              </li>
            ))}
          </ol>
        )}
      </dd>
      <dt>Verdicts</dt>
      <dd>
        {verdicts.length === 0 ? (
          'none recorded'
        ) : (
          <ol aria-label="Verdicts">
            {verdicts.map((verdict, index) => (
              <li key={index}>
                {verdict.stepId}:{' '}
                <span className={`verdict verdict-${verdict.verdict}`}>{verdict.verdict}</span> gap {verdict.gap.toFixed(2)}
                {verdict.reasons.length > 0 && ` — ${verdict.reasons.join('; ')}`}
              </li>
            ))}
          </ol>
        )}
      </dd>
      <dt>Gap trend</dt>
      <dd>{gapTrend.length === 0 ? 'not measured' : formatTrend(gapTrend)}</dd>
    </dl>
  );
}

/** The new description (and, optionally, expected output) the step runs with. */
function StepEditor({ evidence, onDone, onCancel }: { evidence: EscalationAction | null; onDone(choice: EscalationChoice): void; onCancel(): void }) {
  const [description, setDescription] = useState(evidence?.description ?? '');
  const [expected, setExpected] = useState(evidence?.expected_output ?? '');
  const descriptionId = useId();
  const expectedId = useId();
  const trimmed = description.trim();
  return (
    <div className="editor">
      <label htmlFor={descriptionId}>New description</label>
      <textarea id={descriptionId} rows={4} value={description} onChange={(event) => setDescription(event.target.value)} autoFocus />
      <label htmlFor={expectedId}>Expected output (optional)</label>
      <input id={expectedId} value={expected} onChange={(event) => setExpected(event.target.value)} />
      <ConfirmOrCancel
        label="Run edited step"
        disabled={trimmed === '' || trimmed.length > 4000}
        onConfirm={() => onDone({ choice: 'edit', description: trimmed, ...(expected.trim() ? { expected_output: expected.trim() } : {}) })}
        onCancel={onCancel}
      />
    </div>
  );
}

/**
 * An escalation: validation, repairs and re-plans did not get a step through. The operator sees the
 * evidence and chooses: retry the step, skip it (its dependants run without it), edit it, or end the run.
 * An action that does not match EscalationActionSchema is shown as it is.
 */
export function EscalationPanel({ request, explanation, onChoose }: { request: ApprovalRequest; explanation: ReactNode; onChoose(choice: EscalationChoice): void }) {
  const [editing, setEditing] = useState(false);
  const parsed = EscalationActionSchema.safeParse(request.action);
  const evidence = parsed.success ? parsed.data : null;
  return (
    <>
      {evidence && <EvidenceList evidence={evidence} />}
      {explanation}
      <details open={evidence === null}>
        <summary>The exact action</summary>
        <pre className="action">{JSON.stringify(request.action, null, 2)}</pre>
      </details>
      {editing ? (
        <StepEditor evidence={evidence} onDone={onChoose} onCancel={() => setEditing(false)} />
      ) : (
        <div className="actions">
          <button type="button" className="primary" onClick={() => onChoose({ choice: 'retry' })}>
            Retry
          </button>
          <button type="button" onClick={() => onChoose({ choice: 'skip' })}>
            Skip
          </button>
          <button type="button" onClick={() => setEditing(true)}>
            Edit step
          </button>
          <button type="button" className="danger" onClick={() => onChoose({ choice: 'end' })}>
            End run
          </button>
        </div>
      )}
    </>
  );
}
