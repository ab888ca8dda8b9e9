import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { ArchonStore } from '../../../src/core/store/archon-store';
import { MemoryStore } from '../../../src/core/memory/memory-store';
import { REDACTED } from '../../../src/core/secrets/redactor';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();

function withStore(run: (store: ArchonStore) => void, maxItems?: number): void {
  const store = ArchonStore.open(tempDir());
  if (maxItems) store.updateSettings({ memoryMaxItems: maxItems });
  try {
    run(store);
  } finally {
    store.close();
  }
}

/** A fixed clock, stepped by hand, so recency and LRU order are the test's to say. */
function steppedClock(): { now: () => string; advance: () => void } {
  let minute = 0;
  return { now: () => new Date(Date.UTC(2026, 10, 23, 6, minute)).toISOString(), advance: () => void (minute += 1) };
}

describe('MemoryStore', () => {
  it('stores an item with provenance and a short id, finds it by a word of its text, and resolves a prefix of its id', () => {
    withStore((store) => {
      const item = store.memory.add({ kind: 'fact', text: 'The Zephyr vault code is 7731-KESTREL.', source: { runId: 'run-1', stepId: 's1' } });
      expect(item).toMatchObject({ kind: 'fact', source: { runId: 'run-1', stepId: 's1' }, pinned: false, lastUsedAt: null, evidence: [] });
      expect(item.id).toMatch(/^[0-9a-f]{12}$/);
      store.memory.add({ kind: 'fact', text: 'Unrelated: the build uses Vite.' });
      const found = store.memory.search('What is the vault code for Zephyr?', { limit: 5 });
      expect(found.map((entry) => entry.item.id)).toEqual([item.id]);
      expect(found[0]?.matchedBy).toEqual(['lexical']);
      expect(store.memory.resolveId(item.id.slice(0, 6))).toBe(item.id);
      expect(() => store.memory.resolveId('nope')).toThrow(/There is no memory nope\. See `archon memory list`/);
    });
  });

  it('redacts known secrets before anything is written', () => {
    withStore((store) => {
      store.secrets.add('sk-live-abcdef123456');
      const item = store.memory.add({ kind: 'fact', text: 'The key is sk-live-abcdef123456 for the API.', appliesTo: 'calls with sk-live-abcdef123456' });
      expect(item.text).toBe(`The key is ${REDACTED} for the API.`);
      expect(item.appliesTo).toBe(`calls with ${REDACTED}`);
      expect(store.memory.search('sk-live-abcdef123456', { limit: 5 }).every((entry) => !entry.item.text.includes('sk-live'))).toBe(true);
      const updated = store.memory.update(item.id, 'now sk-live-abcdef123456 again');
      expect(updated.text).toBe(`now ${REDACTED} again`);
      const raw = store.db.prepare('SELECT group_concat(text) AS all_text FROM memory_items').get() as { all_text: string };
      expect(raw.all_text).not.toContain('sk-live');
    });
  });

  it('forgets, pins, updates (the index follows the new text) and lists by kind, newest first', () => {
    withStore((store) => {
      const a = store.memory.add({ kind: 'fact', text: 'alpha marmalade' });
      const b = store.memory.add({ kind: 'preference', text: 'prefer tabs' });
      expect(store.memory.list({ limit: 10 }).map((item) => item.id)).toEqual([b.id, a.id]);
      expect(store.memory.list({ kind: 'preference', limit: 10 }).map((item) => item.id)).toEqual([b.id]);
      expect(store.memory.pin(a.id, true).pinned).toBe(true);
      store.memory.update(a.id, 'beta quince');
      expect(store.memory.search('marmalade', { limit: 5 }).map((entry) => entry.matchedBy)).not.toContainEqual(['lexical']);
      expect(store.memory.search('quince', { limit: 5 })[0]?.item.id).toBe(a.id);
      expect(store.memory.forget(a.id)).toBe(true);
      expect(store.memory.get(a.id)).toBeNull();
      expect(store.memory.search('quince', { limit: 5 }).map((entry) => entry.item.id)).not.toContain(a.id);
    });
  });

  it('fuses vector and lexical matches; a vector match under the threshold is left out; no match falls back to recent items', () => {
    withStore((store) => {
      const both = store.memory.add({ kind: 'fact', text: 'kestrel nesting season' });
      const lexicalOnly = store.memory.add({ kind: 'fact', text: 'kestrel plumage' });
      const vectorOnly = store.memory.add({ kind: 'fact', text: 'falcon hunting' });
      const far = store.memory.add({ kind: 'fact', text: 'quarterly tax forms' });
      store.memory.setEmbedding(both.id, 'emb', [1, 0, 0]);
      store.memory.setEmbedding(lexicalOnly.id, 'emb', [0, 0, 1]);
      store.memory.setEmbedding(vectorOnly.id, 'emb', [0.9, 0.1, 0]);
      store.memory.setEmbedding(far.id, 'emb', [0, 1, 0]);
      const results = store.memory.search('kestrel', { limit: 10, embedding: { model: 'emb', vector: [1, 0, 0] } });
      expect(results[0]?.item.id).toBe(both.id);
      expect(results[0]?.matchedBy).toEqual(['vector', 'lexical']);
      expect(results.map((entry) => entry.item.id).sort()).toEqual([both.id, vectorOnly.id, lexicalOnly.id].sort());
      expect(results.find((entry) => entry.item.id === vectorOnly.id)?.matchedBy).toEqual(['vector']);
      expect(store.memory.missingEmbeddings('emb', 10)).toEqual([]);
      expect(store.memory.missingEmbeddings('other', 10)).toHaveLength(4);
      const fallback = store.memory.search('zzz unknown words', { limit: 10 });
      expect(fallback.map((entry) => entry.item.id)).toEqual([far.id, vectorOnly.id, lexicalOnly.id]);
      expect(fallback.every((entry) => entry.matchedBy.join() === 'recent')).toBe(true);
      expect(store.memory.search('zzz unknown words', { limit: 10, recentFallback: false })).toEqual([]);
    });
  });

  it("leaves out a run's own items when asked, from every retrieval and from the fallback", () => {
    withStore((store) => {
      const own = store.memory.add({ kind: 'fact', text: 'kestrel nesting season', source: { runId: 'run-own', stepId: 's1' } });
      const other = store.memory.add({ kind: 'fact', text: 'kestrel plumage', source: { runId: 'run-other', stepId: 's1' } });
      const operator = store.memory.add({ kind: 'preference', text: 'kestrel photos in colour' });
      store.memory.setEmbedding(own.id, 'emb', [1, 0, 0]);
      const ids = (query: string, embedding: { model: string; vector: number[] } | null) => store.memory.search(query, { limit: 10, embedding, excludeRunId: 'run-own' }).map((entry) => entry.item.id).sort();
      expect(ids('kestrel', { model: 'emb', vector: [1, 0, 0] })).toEqual([other.id, operator.id].sort());
      expect(ids('zzz unknown words', null)).toEqual([other.id, operator.id].sort());
    });
  });

  it('ranks the more recently used of two equally relevant items first', () => {
    const clock = steppedClock();
    const store = ArchonStore.open(tempDir());
    const memory = new MemoryStore(store.db, store.secrets, { maxItems: () => 100, now: clock.now });
    try {
      const older = memory.add({ kind: 'fact', text: 'walrus census' });
      clock.advance();
      const newer = memory.add({ kind: 'fact', text: 'walrus census' });
      expect(memory.search('walrus', { limit: 2 }).map((entry) => entry.item.id)).toEqual([newer.id, older.id]);
      clock.advance();
      memory.touch([older.id]);
      expect(memory.get(older.id)?.lastUsedAt).toBe(clock.now());
      expect(memory.search('walrus', { limit: 2 }).map((entry) => entry.item.id)).toEqual([older.id, newer.id]);
    } finally {
      store.close();
    }
  });

  it('keeps within its bound: the least recently used unpinned items are merged into a summary and expire; pinned and recently used ones stay', () => {
    const clock = steppedClock();
    const store = ArchonStore.open(tempDir());
    const memory = new MemoryStore(store.db, store.secrets, { maxItems: () => 100, now: clock.now });
    try {
      const pinned = memory.add({ kind: 'fact', text: 'pinned item zero', pinned: true });
      const first = memory.add({ kind: 'fact', text: 'first ordinary item', source: { runId: 'run-a', stepId: 's1' } });
      const used = memory.add({ kind: 'fact', text: 'used item' });
      for (let index = 0; index < 97; index++) {
        clock.advance();
        memory.add({ kind: 'fact', text: `filler ${index}` });
      }
      memory.touch([used.id]);
      expect(memory.count()).toBe(100);
      clock.advance();
      memory.add({ kind: 'fact', text: 'one too many' });
      expect(memory.count()).toBeLessThanOrEqual(100);
      expect(memory.get(pinned.id)).not.toBeNull();
      expect(memory.get(used.id)).not.toBeNull();
      expect(memory.get(first.id)).toBeNull();
      const summary = memory.search('ordinary', { limit: 1 })[0]?.item;
      expect(summary?.text).toMatch(/^Summary of \d+ older memories/);
      expect(summary?.text).toContain('fact (run run-a, step s1): first ordinary item');
      expect(summary?.evidence).toEqual(['run-a']);
    } finally {
      store.close();
    }
  });

  it('treats FTS5 syntax in a query as words', () => {
    withStore((store) => {
      const item = store.memory.add({ kind: 'fact', text: 'NEAR the "quoted" column' });
      expect(store.memory.search('NEAR( "quoted" * OR -column', { limit: 3 }).map((entry) => entry.item.id)).toEqual([item.id]);
    });
  });

  it('is reached only through archon.db with its migrations (the old unused memory tables are gone)', () => {
    withStore((store) => {
      const names = (store.db.prepare("SELECT name FROM sqlite_master WHERE name IN ('memory', 'memory_vec')").all() as unknown[]).length;
      expect(names).toBe(0);
      expect(store.db).toBeInstanceOf(Database);
    });
  });
});
