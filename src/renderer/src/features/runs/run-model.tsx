import type { RunEvent } from '../../../../shared/schemas/events';
import { endpointSummary } from '../../../../shared/endpoint-summary';

/** What the run's model server is and how its model writes tool calls: the last probe, and the dialect the run detected. */
export function describeModel(events: readonly RunEvent[]): string | null {
  const probe = events.findLast((event) => event.type === 'model.probed');
  if (!probe) return null;
  const dialect = events.findLast((event) => event.type === 'model.dialect_detected');
  const writes = dialect ? `; writes tool calls as ${dialect.dialect}` : '';
  return `${probe.model}: ${endpointSummary(probe)}${writes}${probe.reason ? ` — ${probe.reason}` : ''}`;
}

export function RunModel({ events }: { events: readonly RunEvent[] }) {
  const line = describeModel(events);
  return line ? (
    <p className="run-model" aria-label="Model">
      {line}
    </p>
  ) : null;
}
