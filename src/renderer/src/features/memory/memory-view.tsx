import { useEffect, useId, useState } from 'react';
import { MemoryKindSchema, type MemoryItem, type MemoryKind } from '../../../../shared/schemas/memory';
import { useAppStore } from '../../store/use-app-store';
import { ConfirmOrCancel } from '../approvals/confirm-or-cancel';

/** Opens the run (and step) a memory came from in the Runs view. */
function useOpenRun() {
  const setView = useAppStore((state) => state.setView);
  const selectRun = useAppStore((state) => state.selectRun);
  const selectStep = useAppStore((state) => state.selectStep);
  return async (runId: string, stepId: string | null) => {
    setView('runs');
    await selectRun(runId);
    if (stepId) selectStep(stepId);
  };
}

function Provenance({ item }: { item: MemoryItem }) {
  const openRun = useOpenRun();
  const evidence = item.evidence.filter((runId) => runId !== item.source?.runId);
  return (
    <p className="memory-provenance">
      {item.source ? (
        <>
          From{' '}
          <button type="button" className="link" onClick={() => void openRun(item.source?.runId ?? '', null)}>
            run {item.source.runId.slice(0, 8)}
          </button>
          {item.source.stepId && (
            <>
              ,{' '}
              <button type="button" className="link" onClick={() => void openRun(item.source?.runId ?? '', item.source?.stepId ?? null)}>
                step {item.source.stepId}
              </button>
            </>
          )}
        </>
      ) : (
        'Written by the operator'
      )}
      {evidence.map((runId) => (
        <span key={runId}>
          {' '}
          · evidence{' '}
          <button type="button" className="link" onClick={() => void openRun(runId, null)}>
            run {runId.slice(0, 8)}
          </button>
        </span>
      ))}
      {item.appliesTo && <> · applies to {item.appliesTo}</>}
    </p>
  );
}

function MemoryEntry({ item }: { item: MemoryItem }) {
  const updateMemory = useAppStore((state) => state.updateMemory);
  const forgetMemory = useAppStore((state) => state.forgetMemory);
  const [mode, setMode] = useState<'read' | 'edit' | 'forget'>('read');
  const [draft, setDraft] = useState(item.text);
  const label = `${item.kind} ${item.id}`;
  return (
    <li className={`memory-item${item.pinned ? ' pinned' : ''}`} aria-label={label}>
      <span className="memory-kind">{item.kind}</span>
      {item.pinned && <span className="memory-pinned">pinned</span>}
      {item.global && <span className="memory-global">global</span>}
      {mode === 'edit' ? (
        <>
          <textarea aria-label="Memory text" value={draft} onChange={(event) => setDraft(event.target.value)} />
          <ConfirmOrCancel
            label="Save"
            disabled={draft.trim().length === 0}
            onConfirm={() => void updateMemory(item.id, { text: draft.trim() }).then(() => setMode('read'))}
            onCancel={() => setMode('read')}
          />
        </>
      ) : (
        <p className="memory-text">{item.text}</p>
      )}
      <Provenance item={item} />
      {mode === 'forget' ? (
        <div role="group" aria-label="Confirm forgetting">
          <p>Forget this memory? No run will recall it again.</p>
          <ConfirmOrCancel label="Forget" danger onConfirm={() => void forgetMemory(item.id)} onCancel={() => setMode('read')} />
        </div>
      ) : (
        mode === 'read' && (
          <div className="actions">
            <button
              type="button"
              onClick={() => {
                setDraft(item.text);
                setMode('edit');
              }}
            >
              Edit
            </button>
            <button type="button" onClick={() => void updateMemory(item.id, { pinned: !item.pinned })}>
              {item.pinned ? 'Unpin' : 'Pin'}
            </button>
            <button type="button" onClick={() => void updateMemory(item.id, { global: !item.global })}>
              {item.global ? 'This workspace only' : 'Make global'}
            </button>
            <button type="button" onClick={() => setMode('forget')}>
              Forget
            </button>
          </div>
        )
      )}
    </li>
  );
}

/** Long-term memory: search, read with provenance (the run and step it came from), edit, pin, make global or local, forget. */
export function MemoryView() {
  const memories = useAppStore((state) => state.memories);
  const filter = useAppStore((state) => state.memoryFilter);
  const loadMemories = useAppStore((state) => state.loadMemories);
  const [query, setQuery] = useState(filter.query);
  const [opened] = useState(filter);
  const kindId = useId();
  useEffect(() => {
    void loadMemories(opened);
  }, [loadMemories, opened]);
  return (
    <section aria-labelledby="memory-heading" className="view memory">
      <h1 id="memory-heading">Memory</h1>
      <form
        role="search"
        className="memory-controls"
        onSubmit={(event) => {
          event.preventDefault();
          void loadMemories({ query, kind: filter.kind });
        }}
      >
        <input type="search" aria-label="Search memory" placeholder="Search memory" value={query} onChange={(event) => setQuery(event.target.value)} />
        <button type="submit">Search</button>
        <label htmlFor={kindId}>Kind</label>
        <select id={kindId} value={filter.kind ?? ''} onChange={(event) => void loadMemories({ query, kind: event.target.value ? (event.target.value as MemoryKind) : null })}>
          <option value="">all</option>
          {MemoryKindSchema.options.map((kind) => (
            <option key={kind} value={kind}>
              {kind}
            </option>
          ))}
        </select>
      </form>
      {memories.length === 0 ? (
        <p className="empty">{filter.query ? 'No memory matches this search.' : 'Nothing remembered yet: runs leave facts, episodes and lessons here.'}</p>
      ) : (
        <ul className="memories" aria-label="Memories">
          {memories.map((item) => (
            <MemoryEntry key={`${item.id}:${item.text}`} item={item} />
          ))}
        </ul>
      )}
    </section>
  );
}
