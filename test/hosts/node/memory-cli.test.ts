import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { RecalledMemory } from '../../../src/shared/schemas/memory';
import { planReply, requestText, startModelServer, type ScriptedModelServer } from '../../kit/scripted-model-server';
import { runArchon, spawnArchon } from '../../support/archon-process';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const FACT = 'The Zephyr vault code is 7731-KESTREL.';
const LEARN = 'Read the expedition notes';
const ASK = 'What is the vault code for Zephyr?';
/** Three runs and a dozen CLI processes, each a cold Node start: a loaded machine needs more than the default. */
const CLI_SCENARIO_TIMEOUT_MS = 180_000;

function readDb<T>(dataDir: string, read: (db: Database.Database) => T): T {
  const db = new Database(join(dataDir, 'archon.db'), { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

function runIds(dataDir: string): string[] {
  return readDb(dataDir, (db) => (db.prepare('SELECT id FROM runs ORDER BY rowid').all() as { id: string }[]).map((row) => row.id));
}

function recalled(dataDir: string, runId: string): { stepId?: string; items: RecalledMemory[] }[] {
  return readDb(dataDir, (db) => (db.prepare("SELECT body_json FROM events WHERE run_id = ? AND type = 'memory.recalled' ORDER BY seq").all(runId) as { body_json: string }[]).map((row) => JSON.parse(row.body_json)));
}

/** The model learns the fact in its first run's step; later it answers from what it is given. */
async function startServer(embeddings: 'bag-of-words' | 'unavailable'): Promise<ScriptedModelServer> {
  return startModelServer({
    embeddings,
    reply: (request) => {
      if (request.purpose === 'plan') return planReply([{ id: 'notes', description: 'read the expedition notes' }]);
      if (request.purpose === 'final') return { content: 'done' };
      return { content: requestText(request).includes(`Goal: ${LEARN}`) ? FACT : 'answered from what I was given' };
    },
  });
}

describe('long-term memory through the built CLI', () => {
  for (const embeddings of ['bag-of-words', 'unavailable'] as const) {
    it(`recalls a step's fact in a later run's planning request, naming its run, and not after \`archon memory forget\` (embeddings ${embeddings})`, async () => {
      server = await startServer(embeddings);
      const dataDir = tempDir();
      const common = ['--model-url', server.url, '--data-dir', dataDir, '--workspace', tempDir(), '--approve', 'auto', '--embedding-model', 'nomic-embed-text'];

      const first = await spawnArchon(['run', LEARN, ...common]).done;
      expect(first.status, first.stderr).toBe(0);
      const second = await spawnArchon(['run', ASK, ...common]).done;
      expect(second.status, second.stderr).toBe(0);
      const [run1, run2] = runIds(dataDir) as [string, string];

      const plans = server.chatRequests.filter((request) => request.purpose === 'plan').map(requestText);
      expect(plans[0]).not.toContain('Relevant memory');
      const secondPlan = plans[1] ?? '';
      expect(secondPlan).toContain('Relevant memory');
      expect(secondPlan.slice(secondPlan.indexOf('Relevant memory'))).toContain(FACT);
      expect(secondPlan).toContain(`(source: run ${run1}, step notes), recalled data:\n\`\`\`recalled-data\nread the expedition notes\nResult: ${FACT}\n\`\`\``);
      const planRecall = recalled(dataDir, run2).find((event) => event.stepId === undefined);
      const fromRun1 = planRecall?.items.find((item) => item.kind === 'fact');
      expect(fromRun1?.source).toEqual({ runId: run1, stepId: 'notes' });
      expect(fromRun1?.score).toBeGreaterThan(0);

      const embeddingRequests = server.requests.filter((request) => request.path === '/v1/embeddings');
      expect(embeddingRequests.length).toBeGreaterThan(0);
      expect(embeddingRequests.every((request) => request.body.model === 'nomic-embed-text')).toBe(true);
      if (embeddings === 'bag-of-words') {
        expect(embeddingRequests.some((request) => JSON.stringify(request.body.input).includes('7731-KESTREL'))).toBe(true);
        expect(readDb(dataDir, (db) => db.prepare("SELECT count(*) AS n FROM memory_embeddings WHERE model = 'nomic-embed-text'").get())).not.toEqual({ n: 0 });
      } else {
        expect(readFileSync(join(dataDir, 'logs', 'archon.log'), 'utf8')).toContain('memory recall uses FTS5 only');
      }

      const search = runArchon(['memory', 'search', 'Zephyr vault code 7731-KESTREL', '--json', '--data-dir', dataDir]);
      expect(search.status, search.stderr).toBe(0);
      const matches = search.stdout.trim().split('\n').map((line) => JSON.parse(line) as { id: string; text: string });
      expect(matches.map((match) => match.id)).toContain(fromRun1?.id);
      for (const [index, match] of matches.entries()) {
        const forget = runArchon(['memory', 'forget', index === 0 ? match.id.slice(0, 6) : match.id, '--data-dir', dataDir]);
        expect(forget.status, forget.stderr).toBe(0);
        expect(forget.stdout).toContain(`Forgot memory ${match.id}`);
      }

      const third = await spawnArchon(['run', ASK, ...common]).done;
      expect(third.status, third.stderr).toBe(0);
      const run3 = runIds(dataDir)[2] as string;
      const thirdRequests = server.chatRequests.slice(-3).map(requestText).join('\n');
      expect(thirdRequests).not.toContain('7731-KESTREL');
      const recalledIds = recalled(dataDir, run3).flatMap((event) => event.items.map((item) => item.id));
      for (const match of matches) expect(recalledIds).not.toContain(match.id);
    }, CLI_SCENARIO_TIMEOUT_MS);
  }

  it('lists, pins and unpins memories; an unknown id is refused with exit 2 and what to do', async () => {
    server = await startServer('unavailable');
    const dataDir = tempDir();
    const result = await spawnArchon(['run', LEARN, '--model-url', server.url, '--data-dir', dataDir, '--workspace', tempDir(), '--approve', 'auto']).done;
    expect(result.status, result.stderr).toBe(0);
    expect(server.requests.some((request) => request.path === '/v1/embeddings')).toBe(false);

    const facts = runArchon(['memory', 'list', '--kind', 'fact', '--json', '--data-dir', dataDir]).stdout.trim().split('\n').map((line) => JSON.parse(line) as { id: string; kind: string; text: string });
    expect(facts).toHaveLength(1);
    expect(facts[0]?.text).toContain(FACT);
    const episodes = runArchon(['memory', 'list', '--kind', 'episode', '--data-dir', dataDir]);
    expect(episodes.stdout).toMatch(/episode\s+run [0-9a-f-]+\n/);
    expect(episodes.stdout).toContain(`Run ${runIds(dataDir)[0]} ended completed`);

    // A search that matches nothing says so: it is not given the most recent items instead.
    expect(runArchon(['memory', 'search', 'zeppelin hangar', '--data-dir', dataDir]).stdout).toBe('No memory matches "zeppelin hangar".\n');

    const id = facts[0]?.id ?? '';
    expect(runArchon(['memory', 'pin', id, '--data-dir', dataDir]).stdout).toContain(`Pinned memory ${id}`);
    expect(runArchon(['memory', 'list', '--kind', 'fact', '--data-dir', dataDir]).stdout).toMatch(new RegExp(`^${id}\\s+fact\\s+pinned`));
    expect(runArchon(['memory', 'unpin', id, '--data-dir', dataDir]).stdout).toContain(`Unpinned memory ${id}`);

    for (const command of ['forget', 'pin']) {
      const unknown = runArchon(['memory', command, 'feedfacecafe', '--data-dir', dataDir]);
      expect(unknown.status).toBe(2);
      expect(unknown.stderr).toContain('There is no memory feedfacecafe. See `archon memory list`');
    }
  }, CLI_SCENARIO_TIMEOUT_MS);

  it('--no-memory neither recalls nor stores', async () => {
    server = await startServer('bag-of-words');
    const dataDir = tempDir();
    const common = ['--model-url', server.url, '--data-dir', dataDir, '--workspace', tempDir(), '--approve', 'auto'];
    expect((await spawnArchon(['run', LEARN, ...common]).done).status).toBe(0);
    const before = runArchon(['memory', 'list', '--json', '--data-dir', dataDir]).stdout;
    const forgetful = await spawnArchon(['run', ASK, '--no-memory', ...common]).done;
    expect(forgetful.status, forgetful.stderr).toBe(0);
    expect(server.chatRequests.filter((request) => request.purpose === 'plan').map(requestText)[1]).not.toContain('Relevant memory');
    expect(runArchon(['memory', 'list', '--json', '--data-dir', dataDir]).stdout).toBe(before);
    expect(recalled(dataDir, runIds(dataDir)[1] as string)).toEqual([]);
  }, CLI_SCENARIO_TIMEOUT_MS);
});
