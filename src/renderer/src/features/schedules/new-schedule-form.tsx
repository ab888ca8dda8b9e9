import { useId, useState } from 'react';
import type { RunOrderApprove } from '../../../../shared/schemas/run-order';
import { useAppStore } from '../../store/use-app-store';
import type { ScheduleInput } from './schedules-slice';

const EMPTY = { goal: '', cron: '', name: '', approve: 'deny' as RunOrderApprove };

/** What the form says, as the command takes it: no name lets the host make one. */
function inputOf({ goal, cron, name, approve }: typeof EMPTY): ScheduleInput {
  const id = name.trim();
  return { goal: goal.trim(), cron: cron.trim(), approve, ...(id ? { id } : {}) };
}

export function NewScheduleForm() {
  const addSchedule = useAppStore((state) => state.addSchedule);
  const [fields, setFields] = useState(EMPTY);
  const [adding, setAdding] = useState(false);
  const id = useId();
  const edit = (patch: Partial<typeof EMPTY>) => setFields((current) => ({ ...current, ...patch }));
  const complete = fields.goal.trim() !== '' && fields.cron.trim() !== '';
  return (
    <form
      className="schedule-form"
      aria-labelledby={`${id}-heading`}
      onSubmit={(event) => {
        event.preventDefault();
        setAdding(true);
        void addSchedule(inputOf(fields)).then((added) => {
          setAdding(false);
          if (added) setFields(EMPTY);
        });
      }}
    >
      <h2 id={`${id}-heading`}>New schedule</h2>
      <label htmlFor={`${id}-goal`}>Goal</label>
      <textarea id={`${id}-goal`} rows={3} value={fields.goal} onChange={(event) => edit({ goal: event.target.value })} />
      <label htmlFor={`${id}-cron`}>Cron</label>
      <div className="field">
        <input id={`${id}-cron`} value={fields.cron} placeholder="0 7 * * *" aria-describedby={`${id}-cron-hint`} onChange={(event) => edit({ cron: event.target.value })} />
        <span id={`${id}-cron-hint`} className="hint">
          minute hour day-of-month month day-of-week, in the workers&apos; time zone
        </span>
      </div>
      <label htmlFor={`${id}-name`}>Name (optional)</label>
      <input id={`${id}-name`} value={fields.name} onChange={(event) => edit({ name: event.target.value })} />
      <label htmlFor={`${id}-approve`}>Approvals</label>
      <select id={`${id}-approve`} value={fields.approve} onChange={(event) => edit({ approve: event.target.value as RunOrderApprove })}>
        <option value="deny">no (deny)</option>
        <option value="auto">yes (auto)</option>
        <option value="desk">wait for me (desk)</option>
      </select>
      <button type="submit" className="schedule-submit" disabled={!complete || adding}>
        Add schedule
      </button>
    </form>
  );
}
