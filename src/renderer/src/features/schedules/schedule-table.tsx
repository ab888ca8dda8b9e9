import type { RunOrderApprove, ScheduleState } from '../../../../shared/schemas/run-order';
import { useAppStore } from '../../store/use-app-store';

/** Who answers the approvals of a schedule's runs, in words. */
export const APPROVALS: Record<RunOrderApprove, string> = {
  auto: 'answered yes',
  deny: 'answered no',
  desk: 'wait for you (archon approve)',
};

const shortTime = (iso: string) => new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });

function ScheduleRow({ state: { id, schedule, next, lastSkipped } }: { state: ScheduleState }) {
  const removeSchedule = useAppStore((store) => store.removeSchedule);
  return (
    <tr>
      <th scope="row">{id}</th>
      <td className="schedule-goal">{schedule.goal}</td>
      <td>
        <code>{schedule.cron}</code>
      </td>
      <td>{APPROVALS[schedule.approve]}</td>
      <td>
        <time dateTime={next}>{shortTime(next)}</time>
        {lastSkipped ? (
          <p className="schedule-skipped">
            Skipped <time dateTime={lastSkipped.firedAt}>{shortTime(lastSkipped.firedAt)}</time>: run {lastSkipped.runId.slice(0, 8)} was still going.
          </p>
        ) : null}
      </td>
      <td>
        <button type="button" aria-label={`Remove schedule ${id}`} onClick={() => void removeSchedule(id)}>
          Remove
        </button>
      </td>
    </tr>
  );
}

export function ScheduleTable({ schedules }: { schedules: readonly ScheduleState[] }) {
  if (schedules.length === 0) return <p className="empty">No schedules.</p>;
  return (
    <table className="schedules-table">
      <caption>Schedules</caption>
      <thead>
        <tr>
          <th scope="col">Schedule</th>
          <th scope="col">Goal</th>
          <th scope="col">Cron</th>
          <th scope="col">Approvals</th>
          <th scope="col">Next run</th>
          <th scope="col">
            <span className="sr-only">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {schedules.map((state) => (
          <ScheduleRow key={state.id} state={state} />
        ))}
      </tbody>
    </table>
  );
}
