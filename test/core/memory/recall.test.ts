import { afterEach, describe, expect, it, vi } from 'vitest';
import pino from 'pino';
import { Writable } from 'node:stream';
import { ArchonStore } from '../../../src/core/store/archon-store';
import { Embedder } from '../../../src/core/memory/embedder';
import { FACT_BATCH_MAX, FACT_BATCH_MS, RunMemory, relevantMemorySection, withinBudget } from '../../../src/core/memory/recall';
import { startModelServer, type ScriptedModelServer } from '../../kit/scripted-model-server';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function capturedLog(): { log: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString('utf8')), done()) });
  return { log: pino(sink), lines };
}

const STEP = { runId: 'run-now', planning: false };

function storeWithFacts(): ArchonStore {
  const store = ArchonStore.open(tempDir());
  store.memory.add({ kind: 'fact', text: 'The harbour crane lifts 40 tonnes.', source: { runId: 'run-crane', stepId: 's1' } });
  store.memory.add({ kind: 'fact', text: 'Invoices are filed under /srv/ledger/2026.', source: { runId: 'run-ledger', stepId: 's2' } });
  return store;
}

describe('RunMemory', () => {
  it('embeds stored items and the query through /v1/embeddings and recalls by vector and words; recalled items are marked used', async () => {
    server = await startModelServer({ reply: [], embeddings: 'bag-of-words', embeddingDimensions: 64 });
    const store = storeWithFacts();
    try {
      const memory = new RunMemory(store.memory, new Embedder({ baseUrl: server.url, model: 'embed-small' }), 4096);
      const recalled = await memory.recall('how many tonnes does the harbour crane lift', new AbortController().signal, STEP);
      expect(recalled[0]?.item.text).toBe('The harbour crane lifts 40 tonnes.');
      expect(recalled[0]?.matchedBy).toEqual(['vector', 'lexical']);
      expect(recalled.map((entry) => entry.item.text)).not.toContain('Invoices are filed under /srv/ledger/2026.');
      expect(recalled[0]?.item.id && store.memory.get(recalled[0].item.id)?.lastUsedAt).not.toBeNull();
      const embedded = server.requests.filter((request) => request.path === '/v1/embeddings');
      expect(embedded).toHaveLength(1);
      expect(embedded[0]?.body).toMatchObject({ model: 'embed-small', input: ['Invoices are filed under /srv/ledger/2026.', 'The harbour crane lifts 40 tonnes.', 'how many tonnes does the harbour crane lift'] });
      expect(store.memory.missingEmbeddings('embed-small', 10)).toEqual([]);
      const vec = store.db.prepare('SELECT count(*) AS n FROM memory_vec_64').get();
      expect(vec).toEqual({ n: 2 });
      store.memory.forget(recalled[0]?.item.id ?? '');
      expect(store.db.prepare('SELECT count(*) AS n FROM memory_vec_64').get()).toEqual({ n: 1 });
    } finally {
      store.close();
    }
  });

  it('falls back to FTS5 when the server has no embedding model: one log line, no second try, recall still works', async () => {
    server = await startModelServer({ reply: [], embeddings: 'unavailable' });
    const store = storeWithFacts();
    const { log, lines } = capturedLog();
    try {
      const memory = new RunMemory(store.memory, new Embedder({ baseUrl: server.url, model: 'missing-embed' }), 4096, log);
      const first = await memory.recall('where are invoices filed', new AbortController().signal, STEP);
      const second = await memory.recall('harbour crane', new AbortController().signal, STEP);
      expect(first.map((entry) => entry.item.text)).toEqual(['Invoices are filed under /srv/ledger/2026.']);
      expect(first[0]?.matchedBy).toEqual(['lexical']);
      expect(second[0]?.item.text).toBe('The harbour crane lifts 40 tonnes.');
      expect(server.requests.filter((request) => request.path === '/v1/embeddings')).toHaveLength(1);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('memory recall uses FTS5 only');
      expect(lines[0]).toContain('missing-embed');
    } finally {
      store.close();
    }
  });

  it("keeps recalled text within 30% of the model's context, passing over an item too large for what is left", () => {
    const store = ArchonStore.open(tempDir());
    try {
      const big = store.memory.add({ kind: 'episode', text: `crane ${'x'.repeat(3000)}` });
      const small = store.memory.add({ kind: 'fact', text: 'crane small fact' });
      const found = store.memory.search('crane', { limit: 5 });
      expect(found.map((entry) => entry.item.id).sort()).toEqual([big.id, small.id].sort());
      expect(withinBudget(found, Math.floor(2048 * 0.3)).map((entry) => entry.item.id)).toEqual([small.id]);
      expect(withinBudget(found, Math.floor(16_384 * 0.3))).toHaveLength(2);
      const section = relevantMemorySection(withinBudget(found, 600)) ?? '';
      expect(section.split('\n')[0]).toMatch(/^Relevant memory/);
      expect(section).toContain(`- fact ${small.id} (source: the operator):\ncrane small fact`);
    } finally {
      store.close();
    }
  });

  it('gives a step nothing when nothing matches, and never the run\'s own items; planning gets the most recent instead', async () => {
    const store = storeWithFacts();
    try {
      store.memory.add({ kind: 'fact', text: 'Tide tables for the harbour crane site.', source: { runId: 'run-now', stepId: 's0' } });
      const memory = new RunMemory(store.memory, null, 4096);
      const signal = new AbortController().signal;
      expect(await memory.recall('zebra migration routes', signal, STEP)).toEqual([]);
      const planning = await memory.recall('zebra migration routes', signal, { runId: 'run-now', planning: true });
      expect(planning.map((entry) => entry.item.source?.runId)).toEqual(['run-ledger', 'run-crane']);
      expect(planning.every((entry) => entry.matchedBy.join() === 'recent')).toBe(true);
      const crane = await memory.recall('harbour crane', signal, STEP);
      expect(crane.map((entry) => entry.item.text)).toEqual(['The harbour crane lifts 40 tonnes.']);
    } finally {
      store.close();
    }
  });

  it('logs a store that fails (a missing FTS table) and recalls nothing instead of failing the request', async () => {
    const store = storeWithFacts();
    const { log, lines } = capturedLog();
    try {
      store.db.exec('DROP TABLE memory_fts');
      const memory = new RunMemory(store.memory, null, 4096, log);
      expect(await memory.recall('harbour crane', new AbortController().signal, STEP)).toEqual([]);
      expect(lines.join('')).toContain('memory recall failed');
    } finally {
      store.close();
    }
  });

  it("keeps one episode a run: a run ended again (resumed) replaces its episode", () => {
    const store = ArchonStore.open(tempDir());
    try {
      const memory = new RunMemory(store.memory, null, 4096);
      memory.rememberEpisode('run-a', 'Run run-a ended failed.');
      memory.rememberEpisode('run-b', 'Run run-b ended completed.');
      memory.rememberEpisode('run-a', 'Run run-a ended completed.');
      expect(store.memory.list({ kind: 'episode', limit: 10 }).map((item) => item.text)).toEqual(['Run run-a ended completed.', 'Run run-b ended completed.']);
    } finally {
      store.close();
    }
  });
});

describe('RunMemory: step results kept soon after, together', () => {
  it('writes results that come within FACT_BATCH_MS of each other in one go, once they stop coming; a flush writes what waits at once', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const store = ArchonStore.open(tempDir());
    try {
      const memory = new RunMemory(store.memory, null, 4096);
      const fact = (stepId: string) => ({ kind: 'fact' as const, text: `result of ${stepId}`, source: { runId: 'run-a', stepId } });
      memory.rememberSoon(fact('s1'));
      vi.advanceTimersByTime(FACT_BATCH_MS - 1);
      memory.rememberSoon(fact('s2'));
      vi.advanceTimersByTime(FACT_BATCH_MS - 1);
      expect(store.memory.count()).toBe(0);
      vi.advanceTimersByTime(1);
      expect(store.memory.list({ limit: 10 }).map((item) => item.source?.stepId)).toEqual(['s2', 's1']);

      memory.rememberSoon(fact('s3'));
      memory.flush();
      expect(store.memory.count()).toBe(3);
      vi.advanceTimersByTime(FACT_BATCH_MS);
      expect(store.memory.count()).toBe(3);
    } finally {
      vi.useRealTimers();
      store.close();
    }
  });

  it('never holds more than FACT_BATCH_MAX results: the one that fills the batch writes it', () => {
    const store = ArchonStore.open(tempDir());
    try {
      const memory = new RunMemory(store.memory, null, 4096);
      for (let index = 1; index < FACT_BATCH_MAX; index++) memory.rememberSoon({ kind: 'fact', text: `result ${index}`, source: { runId: 'run-b', stepId: `s${index}` } });
      expect(store.memory.count()).toBe(0);
      memory.rememberSoon({ kind: 'fact', text: 'the last one', source: { runId: 'run-b', stepId: 'last' } });
      expect(store.memory.count()).toBe(FACT_BATCH_MAX);
    } finally {
      store.close();
    }
  });

  it('a store that fails loses the waiting results to the log, not the run', () => {
    const store = ArchonStore.open(tempDir());
    const { log, lines } = capturedLog();
    const memory = new RunMemory(store.memory, null, 4096, log);
    memory.rememberSoon({ kind: 'fact', text: 'kept in vain', source: { runId: 'run-c', stepId: 's1' } });
    store.close();
    expect(() => memory.flush()).not.toThrow();
    expect(lines.join('')).toContain('a memory could not be stored');
  });
});
