import { useId } from 'react';
import type { CriterionOutcome, GoalContract } from '../../../../shared/schemas/goal-contract';
import { criterionKindText, outcomeText } from './contract-model';

/** The contract's criteria, each with its kind in words and, once checked, its outcome with what it rests on. */
export function CriteriaList({ contract, outcomes, label }: { contract: GoalContract; outcomes: readonly CriterionOutcome[] | null; label: string }) {
  if (contract.criteria.length === 0) return <p className="empty">No success criteria.</p>;
  return (
    <ul className="criteria" aria-label={label}>
      {contract.criteria.map((criterion) => {
        const outcome = outcomes?.find((candidate) => candidate.id === criterion.id);
        const result = outcomes ? outcomeText(outcome) : null;
        return (
          <li key={criterion.id}>
            {result && <span className={`criterion-outcome outcome-${result.replace(' ', '-')}`}>{result}: </span>}
            {criterion.text}
            <div className="meta">{criterionKindText(criterion)}</div>
            {outcome && outcome.evidence.length > 0 && (
              <ul className="evidence" aria-label={`Evidence for ${criterion.id}`}>
                {outcome.evidence.map((line, index) => (
                  <li key={index}>{line}</li>
                ))}
              </ul>
            )}
            {outcome?.detail && <div className="meta">{outcome.detail}</div>}
          </li>
        );
      })}
    </ul>
  );
}

function Items({ title, items }: { title: string; items: readonly string[] }) {
  return items.length > 0 ? (
    <>
      <dt>{title}</dt>
      <dd>{items.join('; ')}</dd>
    </>
  ) : null;
}

/** The goal as a contract: what "done" means, and once the outcome check ran, whether each criterion held. */
export function DoneMeans({ contract, outcomes }: { contract: GoalContract; outcomes: readonly CriterionOutcome[] | null }) {
  const headingId = useId();
  return (
    <section className="done-means" aria-labelledby={headingId}>
      <h3 id={headingId}>Done means</h3>
      <p>{contract.goal}</p>
      <CriteriaList contract={contract} outcomes={outcomes} label="Success criteria" />
      {contract.deliverables.length + contract.constraints.length + contract.outOfScope.length > 0 && (
        <dl>
          <Items title="Deliverables" items={contract.deliverables} />
          <Items title="Constraints" items={contract.constraints} />
          <Items title="Out of scope" items={contract.outOfScope} />
        </dl>
      )}
    </section>
  );
}
