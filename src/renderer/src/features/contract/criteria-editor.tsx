import { useId, useState } from 'react';
import { MAX_CRITERIA, type Criterion } from '../../../../shared/schemas/goal-contract';
import { criterionKindText } from './contract-model';

/** A criterion the operator writes: judged by the critic, since free text names no file, command or value to check. */
export function operatorCriterion(criteria: readonly Criterion[], text: string): Criterion {
  const ids = new Set(criteria.map((criterion) => criterion.id));
  let number = criteria.length + 1;
  while (ids.has(`op-${number}`)) number++;
  return { id: `op-${number}`, text, kind: 'judged', source: 'operator' };
}

/** The contract's criteria as editable rows: change a text, remove one, add one in free text. */
export function CriteriaEditor({ criteria, onChange }: { criteria: readonly Criterion[]; onChange(criteria: Criterion[]): void }) {
  const [draft, setDraft] = useState('');
  const draftId = useId();
  const edit = (index: number, text: string) => onChange(criteria.map((criterion, at) => (at === index ? { ...criterion, text, source: 'operator' } : criterion)));
  const add = () => {
    onChange([...criteria, operatorCriterion(criteria, draft.trim())]);
    setDraft('');
  };
  return (
    <fieldset className="criteria-editor">
      <legend>Success criteria</legend>
      <ol>
        {criteria.map((criterion, index) => (
          <li key={criterion.id}>
            <input aria-label={`Criterion ${criterion.id}`} value={criterion.text} onChange={(event) => edit(index, event.target.value)} />
            <span className="meta">{criterionKindText(criterion)}</span>
            <button type="button" aria-label={`Remove criterion ${criterion.id}`} onClick={() => onChange(criteria.filter((_, at) => at !== index))}>
              ✕
            </button>
          </li>
        ))}
      </ol>
      <label htmlFor={draftId}>New criterion</label>
      <input id={draftId} value={draft} onChange={(event) => setDraft(event.target.value)} />
      <button type="button" disabled={draft.trim() === '' || criteria.length >= MAX_CRITERIA} onClick={add}>
        Add criterion
      </button>
    </fieldset>
  );
}
