import type { OutcomeAction } from '../../../../shared/schemas/goal-contract';
import { CriteriaList } from './done-means';

const percent = (confidence: number) => `${Math.round(confidence * 100)}%`;

/** The lead: the gaps the check found, or, with none, that it is unsure and how sure the critic was. */
function Lead({ action }: { action: OutcomeAction }) {
  if (action.gaps.length === 0) {
    return (
      <p className="lead">
        <strong>The outcome check is not sure the goal is met</strong> ({action.confidence === null ? 'no readable verdict' : `critic confidence: ${percent(action.confidence)}`})
      </p>
    );
  }
  return (
    <>
      <p className="lead">
        <strong>The outcome check found gaps</strong>
      </p>
      <ul className="gaps" aria-label="Gaps">
        {action.gaps.map((gap, index) => (
          <li key={index}>{gap}</li>
        ))}
      </ul>
    </>
  );
}

/** An `outcome` request: the gaps the check found (or its doubt), then every criterion's outcome against the contract. */
export function OutcomePanel({ action }: { action: OutcomeAction }) {
  return (
    <div className="outcome-panel">
      <Lead action={action} />
      <p>{action.contract.goal}</p>
      <CriteriaList contract={action.contract} outcomes={action.criteria} label="Criteria outcomes" />
      {action.gaps.length > 0 && <p className="meta">Critic confidence: {action.confidence === null ? 'no critic judged' : percent(action.confidence)}</p>}
    </div>
  );
}
