import { useId, useState, type ReactNode } from 'react';
import { EscalationActionSchema, type ApprovalRequest, type EscalationAction, type EscalationChoice } from '../../../../shared/schemas/approval';
import { formatTrend } from '../validation/validation-model';
import { ConfirmOrCancel } from './confirm-or-cancel';

type Attempt = EscalationAction['attempts'][number];

/** Each distinct failure once, in the order first seen, with how many times it happened; the step's last failure counts too. */
function distinctFailures(attempts: readonly Pick<Attempt, 'stepId' | 'reason'>[]): { stepId: string; reason: string; times: number }[] {
  const seen = new Map<string, { stepId: string; reason: string; times: number }>();
  for (const { stepId, reason } of attempts) {
    const key = `${stepId}\n${reason}`;
    const known = seen.get(key);
    seen.set(key, known ? { ...known, times: known.times + 1 } : { stepId, reason, times: 1 });
  }
  return [...seen.values()];
}

/** The last failure is usually the last attempt's: it is listed with the attempts, not once more. */
function failuresOf({ attempts, stepId, reason }: EscalationAction) {
  const last = attempts.at(-1);
  const includesLast = last !== undefined && last.stepId === stepId && last.reason === reason;
  return distinctFailures(includesLast ? attempts : [...attempts, { stepId, reason }]);
}

function EvidenceList({ evidence }: { evidence: EscalationAction }) {
  const { verdicts, gapTrend } = evidence;
  return (
    <dl className="explanation escalation-evidence" aria-label="Escalation evidence">
      <dt>Step</dt>
      <dd>
        {evidence.stepId}: {evidence.description}
      </dd>
      <dt>Why you are asked</dt>
      <dd>{evidence.why}</dd>
      <dt>Failures</dt>
      <dd>
        <ol aria-label="Failed attempts">
          {failuresOf(evidence).map((failure) => (
            <li key={`${failure.stepId}\n${failure.reason}`}>
              {failure.stepId}: {failure.reason}
              {failure.times > 1 && <span className="times"> ×{failure.times}</span>}
            </li>
          ))}
        </ol>
      </dd>
      {verdicts.length > 0 && (
        <>
          <dt>Verdicts</dt>
          <dd>
            <ol aria-label="Verdicts">
              {verdicts.map((verdict, index) => (
                <li key={index}>
                  {verdict.stepId}: <span className={`verdict verdict-${verdict.verdict}`}>{verdict.verdict}</span>, gap to its expected output {verdict.gap.toFixed(2)}
                  {verdict.reasons.length > 0 && ` — ${verdict.reasons.join('; ')}`}
                </li>
              ))}
            </ol>
          </dd>
        </>
      )}
      {gapTrend.length > 0 && (
        <>
          <dt>Run's gap to its goal</dt>
          <dd>
            {formatTrend(gapTrend)} <span className="meta">(0: the goal is reached, 1: nowhere near it)</span>
          </dd>
        </>
      )}
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
 * An action that does not match EscalationActionSchema is shown as it is. Renders the dialog's body
 * (after `lead`) and its action row.
 */
export function EscalationPanel({ request, lead, explanation, onChoose }: { request: ApprovalRequest; lead: ReactNode; explanation: ReactNode; onChoose(choice: EscalationChoice): void }) {
  const [editing, setEditing] = useState(false);
  const parsed = EscalationActionSchema.safeParse(request.action);
  const evidence = parsed.success ? parsed.data : null;
  return (
    <>
      <div className="modal-body">
        {lead}
        {evidence && <EvidenceList evidence={evidence} />}
        {explanation}
        <details open={evidence === null}>
          <summary>The exact action</summary>
          <pre className="action">{JSON.stringify(request.action, null, 2)}</pre>
        </details>
        {editing && <StepEditor evidence={evidence} onDone={onChoose} onCancel={() => setEditing(false)} />}
      </div>
      {!editing && (
        <div className="actions modal-actions">
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
