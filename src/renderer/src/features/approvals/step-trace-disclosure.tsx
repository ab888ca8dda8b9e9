import { useState } from 'react';
import type { RunEvent } from '../../../../shared/schemas/events';
import { useAppStore } from '../../store/use-app-store';
import { StepTrace } from '../inspector/step-trace';

/** How many of the step's latest events the dialog shows: enough to judge the request, short enough to read. */
const RECENT_EVENTS = 40;

/**
 * The step's trace, read from the dialog: fetched each time it is opened, so it is current. A run on
 * the cluster (`onCluster`) may have its events in its worker's data dir only, which is said as such.
 */
export function StepTraceDisclosure({ runId, stepId, onCluster }: { runId: string; stepId: string; onCluster: boolean }) {
  const client = useAppStore((state) => state.client);
  const [events, setEvents] = useState<readonly RunEvent[] | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const load = async () => {
    try {
      const detail = await client.commands['runs.get']({ runId });
      setEvents(detail.events.filter((event) => 'stepId' in event && event.stepId === stepId).slice(-RECENT_EVENTS));
      setProblem(null);
    } catch (error) {
      const notHere = onCluster && (error as { code?: unknown } | null)?.code === 'NOT_FOUND';
      setProblem(notHere ? "This run's events are in the data dir of the worker that drives it, not in this desk's." : error instanceof Error ? error.message : String(error));
    }
  };
  return (
    <details
      className="step-trace"
      onToggle={(event) => {
        if (event.currentTarget.open) void load();
      }}
    >
      <summary>Show step trace</summary>
      {problem && <p role="alert">{problem}</p>}
      {events === null && !problem && <p>Loading…</p>}
      {events !== null && (events.length > 0 ? <StepTrace stepId={stepId} events={events} /> : <p>No events for step {stepId} yet.</p>)}
    </details>
  );
}
