import { useEffect } from 'react';
import { inAppTerms } from '../../../../shared/app-advice';
import { useAppStore } from '../../store/use-app-store';
import { NewScheduleForm } from './new-schedule-form';
import { ScheduleTable } from './schedule-table';

/** The schedules the cluster in Settings keeps: listed when the view opens, added and removed here. */
export function SchedulesView() {
  const schedules = useAppStore((state) => state.schedules);
  const problem = useAppStore((state) => state.schedulesProblem);
  const loadSchedules = useAppStore((state) => state.loadSchedules);
  useEffect(() => {
    void loadSchedules();
  }, [loadSchedules]);
  return (
    <section aria-labelledby="schedules-heading" className="view schedules">
      <h1 id="schedules-heading">Schedules</h1>
      <p className="schedules-intro">Goals the workers of your Restate cluster run on a cron schedule, while this desk is closed. Their runs land in the Inbox.</p>
      {problem && (
        <p role="alert" className="schedules-problem">
          {inAppTerms(problem)}
        </p>
      )}
      {schedules && <ScheduleTable schedules={schedules} />}
      <NewScheduleForm />
    </section>
  );
}
