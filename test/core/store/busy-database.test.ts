import { once } from 'node:events';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { ArchonStore } from '../../../src/core/store/archon-store';
import { ArchonError } from '../../../src/shared/errors';
import { planReply, stepIdOf, type RecordedRequest, type ScriptedReply } from '../../kit/scripted-model-server';
import { useEngine } from '../../support/engine';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
const startEngine = useEngine();

/**
 * Another process's write, in a thread of its own: it takes the write lock, stores message 1 of
 * `agent:critic`, says so, then commits a moment after it is told the other connection is appending.
 */
const HOLDER = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require('better-sqlite3');
const db = new Database(workerData.file);
const appending = new Int32Array(workerData.appending);
db.exec('BEGIN IMMEDIATE');
db.prepare("INSERT INTO bus_messages (id, run_id, topic, topic_seq, correlation_id, from_agent, to_agent, kind, body, ts) VALUES ('held', 'r', 'agent:critic', 1, 'held', 'coordinator', 'critic', 'task', 'first', 'now')").run();
parentPort.postMessage('holding');
Atomics.wait(appending, 0, 0, 60000);
Atomics.wait(appending, 0, 1, 300);
db.exec('COMMIT');
db.close();
`;

const envelope = { id: 'waited', correlationId: 'waited', from: 'coordinator', to: 'critic', topic: 'agent:critic', kind: 'task' as const, body: 'second', ts: 'now' };

/** `.transaction(` calls in a source text that do not begin IMMEDIATE (better-sqlite3's default is DEFERRED). */
function deferredTransactions(source: string): string[] {
  return [...source.matchAll(/\.transaction\(/g)].flatMap((match) => {
    const end = closingParen(source, match.index + match[0].length);
    return source.startsWith('.immediate()', end) ? [] : [source.slice(match.index, end)];
  });
}

/** Where the call whose arguments start at `from` ends, just past its closing parenthesis. */
function closingParen(source: string, from: number): number {
  let depth = 1;
  let index = from;
  for (; index < source.length && depth > 0; index++) depth += source[index] === '(' ? 1 : source[index] === ')' ? -1 : 0;
  return index;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : /\.tsx?$/.test(name) ? [path] : [];
  });
}

describe('a busy database', () => {
  it("waits for another connection's write to commit, then appends the bus message after it (numbered 2 on its topic)", async () => {
    const store = ArchonStore.open(tempDir());
    store.db.prepare("INSERT INTO runs (id, goal, status, policy, created_at, updated_at) VALUES ('r', 'g', 'running', 'balanced', 'now', 'now')").run();
    const appending = new Int32Array(new SharedArrayBuffer(4));
    const worker = new Worker(HOLDER, { eval: true, workerData: { file: store.file, appending: appending.buffer } });
    try {
      expect((await once(worker, 'message'))[0]).toBe('holding');
      Atomics.store(appending, 0, 1);
      Atomics.notify(appending, 0);
      expect(store.runs.busMessages.append('r', envelope)).toMatchObject({ topicSeq: 2 });
      expect(store.runs.busMessages.list('r').map((message) => [message.envelope.id, message.topicSeq])).toEqual([['held', 1], ['waited', 2]]);
    } finally {
      await worker.terminate();
      store.close();
    }
  });

  it('held by another process past the busy timeout: the run ends with a typed STORE_LOCKED saying to resume, is neither stopped nor re-planned, and resume completes it', async () => {
    let holder: Database.Database | null = null;
    const engine = await startEngine({
      reply: (request: RecordedRequest): ScriptedReply => {
        if (request.purpose === 'plan') return planReply([{ id: 'one', description: 'first' }, { id: 'two', description: 'second', dependencies: ['one'] }]);
        if (request.purpose === 'final') return { content: 'final answer' };
        if (stepIdOf(request) === 'two' && holder === null) {
          // Another process takes the write lock while step two is being answered, and keeps it past the wait.
          engine.runtime.store.db.pragma('busy_timeout = 50');
          holder = new Database(engine.runtime.store.file);
          holder.exec('BEGIN IMMEDIATE');
        }
        return { content: `result of ${stepIdOf(request)}` };
      },
    });
    const failure = await engine.run('two steps').catch((error: unknown) => error);
    expect(ArchonError.isInstance(failure) && failure.code).toBe('STORE_LOCKED');
    expect((failure as Error).message).toMatch(/busy with other Archon processes.*Nothing was lost: resume the run/);
    (holder as Database.Database | null)?.exec('ROLLBACK');
    (holder as Database.Database | null)?.close();
    engine.runtime.store.db.pragma('busy_timeout = 5000');

    const runId = engine.runtime.store.runs.listRuns(1)[0]?.id as string;
    expect(engine.runtime.store.runs.getRun(runId)?.summary.status).not.toBe('stopped');
    expect(engine.runtime.store.runs.events(runId, Number.MAX_SAFE_INTEGER).filter((event) => ['step.failed', 'plan.revised', 'run.stopped'].includes(event.type))).toEqual([]);
    expect(await engine.resume(runId)).toMatchObject({ status: 'completed' });
    expect(engine.server.chatRequests.filter((request) => request.purpose === 'step').map(stepIdOf).filter((id) => id === 'one')).toHaveLength(1);
  });

  it('is waited for by every write transaction in src: none begins DEFERRED, and no SQL begins one by hand', () => {
    expect(deferredTransactions('db.transaction(() => write())();\nlog.transaction(() => write()).immediate();')).toEqual(['.transaction(() => write())']);
    const root = join(__dirname, '../../../src');
    const found = sourceFiles(root).flatMap((file) => {
      const source = readFileSync(file, 'utf8');
      const calls = relative(root, file) === join('core', 'store', 'open-database.ts') ? [] : deferredTransactions(source);
      const begins = source.match(/['"`]\s*BEGIN\b/g) ?? [];
      return [...calls, ...begins].map((text) => `${relative(root, file)}: ${text}`);
    });
    expect(found).toEqual([]);
  });
});
