import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import { Writable } from 'node:stream';
import { ArchonStore } from '../../../src/core/store/archon-store';
import { Embedder } from '../../../src/core/model/embedder';
import { RunMemory, relevantMemorySection, withinBudget } from '../../../src/core/memory/recall';
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

/** The runs the facts came from, and the run recalling them, all in one workspace (recall keeps to the run's workspace). */
function runsInOneWorkspace(store: ArchonStore, ids: readonly string[]): void {
  const insert = store.db.prepare("INSERT INTO runs (id, goal, status, policy, options_json, created_at, updated_at) VALUES (?, 'g', 'completed', 'balanced', ?, 'now', 'now')");
  for (const id of ids) insert.run(id, JSON.stringify({ workspace: '/srv/workspace' }));
}

function storeWithFacts(): ArchonStore {
  const store = ArchonStore.open(tempDir());
  runsInOneWorkspace(store, ['run-crane', 'run-ledger', 'run-now']);
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
      expect(section).toContain(`- fact ${small.id} (source: the operator), recalled data:\n\`\`\`recalled-data\ncrane small fact\n\`\`\``);
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

describe("RunMemory.remember inside a caller's write", () => {
  const OPTIONS = { modelUrl: 'http://127.0.0.1:1/v1', model: 'm', policy: 'balanced' as const, concurrency: null, maxTokens: null, maxCostUsd: null, workspace: '/tmp', maxIterations: 10, verification: 'checks' as const, repairBudget: 2, maxReplans: 3 };
  const fact = (stepId: string) => ({ kind: 'fact' as const, text: `result of ${stepId}`, source: { runId: 'run-a', stepId } });

  it('is part of that commit: a write that fails takes its item with it', () => {
    const store = ArchonStore.open(tempDir());
    try {
      const memory = new RunMemory(store.memory, null, 4096);
      expect(() =>
        store.runs.together(() => {
          memory.remember(fact('s1'));
          throw new Error('the step could not be completed');
        }),
      ).toThrow('the step could not be completed');
      expect(store.memory.count()).toBe(0);
      store.runs.together(() => memory.remember(fact('s2')));
      expect(store.memory.list({ limit: 10 }).map((item) => item.source?.stepId)).toEqual(['s2']);
    } finally {
      store.close();
    }
  });

  it("an item that cannot be stored is undone alone and logged: the caller's writes stand", () => {
    const dataDir = tempDir();
    const store = ArchonStore.open(dataDir);
    const { log, lines } = capturedLog();
    try {
      store.runs.createRun({ id: 'run-a', goal: 'g', policy: 'balanced', options: OPTIONS, now: '2026-11-23T00:00:00.000Z' });
      const other = new Database(join(dataDir, 'archon.db'));
      other.exec("CREATE TRIGGER refuse_facts BEFORE INSERT ON memory_items BEGIN SELECT RAISE(ABORT, 'no room for facts'); END");
      other.close();
      const memory = new RunMemory(store.memory, null, 4096, log);
      store.runs.together(() => {
        store.runs.putFact('run-a', 'answer', '42', '2026-11-23T00:00:01.000Z');
        expect(memory.remember(fact('s1'))).toBeNull();
      });
      expect(store.runs.fact('run-a', 'answer')).toBe('42');
      expect(store.memory.count()).toBe(0);
      expect(lines.join('')).toContain('a memory could not be stored');
    } finally {
      store.close();
    }
  });
});
