import { useEffect, useState } from 'react';
import type { RunEvent } from '../../../../shared/schemas/events';
import type { RecalledMemory } from '../../../../shared/schemas/memory';
import { useAppStore } from '../../store/use-app-store';

/** Each item's text now (`memory.get`): absent once forgotten; null while it is being read. */
function useMemoryTexts(ids: readonly string[]): { texts: Map<string, string> | null; problem: string | null } {
  const client = useAppStore((state) => state.client);
  const [texts, setTexts] = useState<Map<string, string> | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  // The ids as one value, so a new array of the same ids does not read them again.
  const key = JSON.stringify([...new Set(ids)].slice(0, 100));
  useEffect(() => {
    const wanted = JSON.parse(key) as string[];
    if (wanted.length === 0) return;
    let current = true;
    client.commands['memory.get']({ ids: wanted }).then(
      (items) => {
        if (!current) return;
        setTexts(new Map(items.map((item) => [item.id, item.text])));
        setProblem(null);
      },
      (error: unknown) => {
        if (current) setProblem(error instanceof Error ? error.message : String(error));
      },
    );
    return () => {
      current = false;
    };
  }, [client, key]);
  return { texts, problem };
}

/** What long-term memory gave the step (its `memory.recalled` events), most relevant first and folded: each item's kind, id, where it came from, its relevance and its text. */
export function RecalledMemories({ stepId, events }: { stepId: string; events: readonly RunEvent[] }) {
  const recalled: RecalledMemory[] = events.flatMap((event) => (event.type === 'memory.recalled' && event.stepId === stepId ? event.items : [])).sort((a, b) => b.score - a.score);
  const { texts, problem } = useMemoryTexts(recalled.map((item) => item.id));
  if (recalled.length === 0) return null;
  return (
    <section aria-label="Recalled memories">
      <details className="recalled">
        <summary>Recalled memories ({recalled.length})</summary>
        {problem && <p role="alert">{problem}</p>}
        <ul className="recalled-memories">
          {recalled.map((item, index) => (
            <li key={`${item.id}:${index}`}>
              <span className="memory-kind">{item.kind}</span> {item.id}
              {item.source ? ` from run ${item.source.runId.slice(0, 8)}${item.source.stepId ? `, step ${item.source.stepId}` : ''}` : ' written by the operator'} (relevance {item.score.toFixed(3)})
              {texts && <p className="memory-text">{texts.get(item.id) ?? 'Forgotten since.'}</p>}
            </li>
          ))}
        </ul>
      </details>
    </section>
  );
}
