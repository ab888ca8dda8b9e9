import type { RunEvent } from '../../../../shared/schemas/events';
import type { RecalledMemory } from '../../../../shared/schemas/memory';

/** What long-term memory gave the step (its `memory.recalled` events): each item's kind, id, where it came from and its score. */
export function RecalledMemories({ stepId, events }: { stepId: string; events: readonly RunEvent[] }) {
  const recalled: RecalledMemory[] = events.flatMap((event) => (event.type === 'memory.recalled' && event.stepId === stepId ? event.items : []));
  if (recalled.length === 0) return null;
  return (
    <section aria-label="Recalled memories">
      <h3>Recalled memories ({recalled.length})</h3>
      <ul className="recalled-memories">
        {recalled.map((item, index) => (
          <li key={`${item.id}:${index}`}>
            <span className="memory-kind">{item.kind}</span> {item.id}
            {item.source ? ` from run ${item.source.runId.slice(0, 8)}${item.source.stepId ? `, step ${item.source.stepId}` : ''}` : ' written by the operator'} (score {item.score.toFixed(3)})
          </li>
        ))}
      </ul>
    </section>
  );
}
