import { useId, useState, type ReactNode } from 'react';
import type { ApprovalDecision, ApprovalRequest } from '../../../../shared/schemas/approval';
import { elicitationContent, elicitationFields, ElicitationActionSchema, type Field, type FieldValue } from './elicitation-form';

function FieldInput({ field, value, onChange }: { field: Field; value: FieldValue; onChange(value: FieldValue): void }) {
  const id = useId();
  const hintId = useId();
  const described = field.description ? { 'aria-describedby': hintId } : {};
  const label = `${field.label}${field.required ? ' (required)' : ''}`;
  const hint = field.description && (
    <span id={hintId} className="hint">
      {field.description}
    </span>
  );
  if (field.kind === 'boolean') {
    return (
      <div className="field">
        <label className="inline">
          <input type="checkbox" checked={value === true} onChange={(event) => onChange(event.target.checked)} {...described} /> {label}
        </label>
        {hint}
      </div>
    );
  }
  if (field.kind === 'choices') {
    const chosen = Array.isArray(value) ? value : [];
    return (
      <fieldset className="field" {...described}>
        <legend>{label}</legend>
        {field.options.map((option) => (
          <label key={option.value} className="inline">
            <input
              type="checkbox"
              checked={chosen.includes(option.value)}
              onChange={(event) => onChange(event.target.checked ? [...chosen, option.value] : chosen.filter((item) => item !== option.value))}
            />{' '}
            {option.label}
          </label>
        ))}
        {hint}
      </fieldset>
    );
  }
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {field.kind === 'choice' ? (
        <select id={id} value={String(value)} onChange={(event) => onChange(event.target.value)} {...described}>
          {!field.required && <option value="">(none)</option>}
          {field.options.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      ) : (
        <input
          id={id}
          type={field.kind === 'text' ? field.inputType : 'text'}
          inputMode={field.kind === 'integer' ? 'numeric' : field.kind === 'number' ? 'decimal' : undefined}
          value={String(value)}
          onChange={(event) => onChange(event.target.value)}
          {...described}
        />
      )}
      {hint}
    </div>
  );
}

/** A server asks the operator for information: a form from its requested schema; Submit answers, Decline refuses. Renders the dialog's body (after `lead`) and its action row. */
export function ElicitationForm({ request, lead, onDecide }: { request: ApprovalRequest; lead: ReactNode; onDecide(decision: ApprovalDecision): void }) {
  const parsed = ElicitationActionSchema.safeParse(request.action);
  const [fields] = useState(() => (parsed.success ? elicitationFields(parsed.data.requestedSchema) : []));
  const [values, setValues] = useState<Record<string, FieldValue>>(() => Object.fromEntries(fields.map((field) => [field.key, field.initial])));
  const decline = () => onDecide({ verdict: 'reject', feedback: 'Declined by the operator.' });
  const declineButton = (
    <button type="button" onClick={decline}>
      Decline
    </button>
  );
  if (!parsed.success) {
    return (
      <>
        <div className="modal-body">
          {lead}
          <p className="invalid">The server asked with a form this app cannot show; decline, and the server is told so.</p>
        </div>
        <div className="actions modal-actions">{declineButton}</div>
      </>
    );
  }
  const result = elicitationContent(fields, values);
  return (
    <>
      <div className="modal-body">
        {lead}
        <div className="editor elicitation">
          {fields.map((field) => (
            <FieldInput key={field.key} field={field} value={values[field.key] ?? field.initial} onChange={(value) => setValues((current) => ({ ...current, [field.key]: value }))} />
          ))}
          <p role="status" className={result.ok ? 'valid' : 'invalid'}>
            {result.ok ? `This goes to ${parsed.data.server} when you submit.` : result.problems.join(' ')}
          </p>
        </div>
      </div>
      <div className="actions modal-actions">
        <button type="button" className="primary" disabled={!result.ok} onClick={() => result.ok && onDecide({ verdict: 'edit', edited: result.content })}>
          Submit
        </button>
        {declineButton}
      </div>
    </>
  );
}
