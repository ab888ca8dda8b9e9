import type { StepRecovery, StepVerdict } from './validation-model';

function VerdictItem({ verdict }: { verdict: StepVerdict }) {
  return (
    <li>
      <span className={`verdict verdict-${verdict.verdict}`}>{verdict.verdict}</span> gap {verdict.gap.toFixed(2)}
      {verdict.confidence !== null && `, confidence ${Math.round(verdict.confidence * 100)}%`}
      {verdict.reasons.length > 0 && (
        <ul aria-label="Reasons">
          {verdict.reasons.map((reason, index) => (
            <li key={index}>{reason}</li>
          ))}
        </ul>
      )}
      {verdict.checks.length > 0 && (
        <ul aria-label="Checks">
          {verdict.checks.map((check, index) => (
            <li key={index}>
              {check.passed ? '✓' : '✗'} {check.name}
              {check.detail && ` — ${check.detail}`}
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

/** What validation and recovery made of a step: each verdict with the critic's reasons and the checks, its repairs, its revision. */
export function StepVerdicts({ recovery, onSelectStep }: { recovery: StepRecovery; onSelectStep(id: string): void }) {
  const { verdicts, repairs, revision, replacedBy } = recovery;
  if (verdicts.length === 0 && repairs.length === 0 && revision === null && replacedBy === null) return null;
  return (
    <section className="step-verdicts" aria-label="Validation">
      {revision !== null && <p>Added by plan revision {revision}.</p>}
      {replacedBy && (
        <p>
          Replaced by{' '}
          {replacedBy.map((id) => (
            <button key={id} type="button" className="link" onClick={() => onSelectStep(id)}>
              {id}
            </button>
          ))}
          .
        </p>
      )}
      {verdicts.length > 0 && (
        <>
          <h3>Verdicts</h3>
          <ol className="verdicts" aria-label="Verdicts">
            {verdicts.map((verdict) => (
              <VerdictItem key={verdict.seq} verdict={verdict} />
            ))}
          </ol>
        </>
      )}
      {repairs.length > 0 && (
        <>
          <h3>Repairs</h3>
          <ol className="verdicts" aria-label="Repairs">
            {repairs.map((reason, index) => (
              <li key={index}>{reason}</li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
}
