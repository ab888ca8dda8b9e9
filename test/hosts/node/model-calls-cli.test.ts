import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { planReply, requestText, startModelServer, type RecordedRequest, type ScriptedModelServer, type ScriptedReply } from '../../kit/scripted-model-server';
import { spawnArchon } from '../../support/archon-process';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Three CLI processes, each a cold Node start: a loaded machine needs more than the default. */
const CLI_SCENARIO_TIMEOUT_MS = 120_000;

/** Two steps, one through the calculator; the first step request fails once (HTTP 500) and is retried. */
function model(): (request: RecordedRequest) => ScriptedReply {
  let failedOnce = false;
  return (request) => {
    if (request.purpose === 'lessons') {
      const runIds = [...requestText(request).matchAll(/^Run (\S+) \(/gm)].map((match) => match[1] as string);
      return { toolCalls: [{ name: 'submit_lessons', arguments: { lessons: [{ text: 'The calculator adds.', evidence: runIds, applies_to: 'sums' }] } }] };
    }
    if (request.purpose === 'plan') return planReply([{ id: 'add', description: 'Add 2 and 3 with the calculator' }, { id: 'say', description: 'Say the sum', dependencies: ['add'] }]);
    if (request.purpose === 'final') return { content: '5' };
    if (!failedOnce) {
      failedOnce = true;
      return { status: 500, message: 'scripted hiccup' };
    }
    const toolDone = (request.body.messages ?? []).some((message) => message.role === 'tool');
    return request.body.messages?.some((message) => String(message.content).includes('Step add:')) && !toolDone ? { toolCalls: [{ name: 'calculator', arguments: { expression: '2+3' } }] } : { content: '5' };
  };
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

function readDb<T>(dataDir: string, sql: string): T[] {
  const db = new Database(join(dataDir, 'archon.db'), { readonly: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

/** What the server received, by X-Archon-Purpose. */
const received = (server: ScriptedModelServer) => countBy(server.requests, (request) => request.purpose ?? 'no X-Archon-Purpose');
const modelCalls = (dataDir: string) => readDb<{ run_id: string; purpose: string; status: string }>(dataDir, 'SELECT run_id, purpose, status FROM model_calls ORDER BY rowid');
const runs = (dataDir: string) => readDb<{ id: string; status: string; error: string | null }>(dataDir, 'SELECT id, status, error FROM runs ORDER BY rowid');

describe('every request a model server receives is one model_calls row with its purpose', () => {
  it(
    'after `archon run` with memory and `archon dream`, by purpose, probe, embeddings and lessons included; a second run within the probe cache lifetime sends no probe request',
    async () => {
      const scripted = await startModelServer({ reply: model(), embeddings: 'bag-of-words' });
      server = scripted;
      const dataDir = tempDir();
      const run = (goal: string) => spawnArchon(['run', goal, '--model-url', scripted.url, '--data-dir', dataDir, '--workspace', tempDir(), '--approve', 'auto', '--embedding-model', 'nomic-embed-text'], { OPENAI_API_KEY: '' }).done;

      const first = await run('add 2 and 3');
      expect(first.status, first.stderr).toBe(0);
      const afterFirst = received(scripted);
      expect(afterFirst).toMatchObject({ probe: expect.any(Number), embedding: expect.any(Number), plan: 1, final: 1 });
      expect(countBy(modelCalls(dataDir), (call) => call.purpose)).toEqual(afterFirst);
      expect(modelCalls(dataDir).filter((call) => call.status === 'failed')).toEqual([expect.objectContaining({ purpose: 'step' })]);

      const second = await run('add 2 and 3 again');
      expect(second.status, second.stderr).toBe(0);
      expect(received(scripted).probe).toBe(afterFirst.probe);
      const calls = modelCalls(dataDir);
      expect(countBy(calls, (call) => call.purpose)).toEqual(received(scripted));
      const secondRun = calls.at(-1)?.run_id;
      expect(calls.filter((call) => call.run_id === secondRun && call.purpose === 'probe')).toEqual([]);
      expect(calls.filter((call) => call.run_id === secondRun && call.purpose === 'embedding').length).toBeGreaterThan(0);

      const dreamt = await spawnArchon(['dream', '--model-url', scripted.url, '--data-dir', dataDir], { OPENAI_API_KEY: '' }).done;
      expect(dreamt.status, dreamt.stderr).toBe(0);
      const afterDream = received(scripted);
      expect(afterDream.lessons).toBe(1);
      expect(countBy(modelCalls(dataDir), (call) => call.purpose)).toEqual(afterDream);
    },
    CLI_SCENARIO_TIMEOUT_MS,
  );

  it(
    'a probe the server answered with a refusal: the run is recorded as failed with every request it received (exit 2); nothing listening: no run at all',
    async () => {
      server = await startModelServer({ reply: [], refuse: 'lmstudio-no-model' });
      const dataDir = tempDir();
      const refused = await spawnArchon(['run', 'hello', '--model-url', server.url, '--data-dir', dataDir, '--workspace', tempDir(), '--approve', 'auto'], { OPENAI_API_KEY: '' }).done;
      expect(refused.status).toBe(2);
      expect(refused.stderr).toContain('has no model loaded');
      expect(server.requests.length).toBeGreaterThan(1);
      expect(server.requests.every((request) => request.purpose === 'probe')).toBe(true);
      const [run] = runs(dataDir);
      expect(runs(dataDir)).toHaveLength(1);
      expect(run).toMatchObject({ status: 'failed', error: expect.stringContaining('has no model loaded') });
      const calls = modelCalls(dataDir);
      expect(calls).toHaveLength(server.requests.length);
      expect(calls.every((call) => call.run_id === run?.id && call.purpose === 'probe')).toBe(true);
      expect(calls.filter((call) => call.status === 'failed')).toHaveLength(1);

      const url = server.url;
      await server.close();
      server = undefined;
      const unreachable = tempDir();
      const nobody = await spawnArchon(['run', 'hello', '--model-url', url, '--data-dir', unreachable, '--workspace', tempDir(), '--approve', 'auto'], { OPENAI_API_KEY: '' }).done;
      expect(nobody.status).toBe(2);
      expect(runs(unreachable)).toEqual([]);
      expect(modelCalls(unreachable)).toEqual([]);
    },
    CLI_SCENARIO_TIMEOUT_MS,
  );
});
