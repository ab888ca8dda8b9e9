import { afterEach, describe, expect, it } from 'vitest';
import { ArchonStore } from '../../../src/core/store/archon-store';
import { planReply, requestText, startModelServer, type RecordedRequest, type ScriptedModelServer, type ScriptedReply } from '../../kit/scripted-model-server';
import { runArchon, spawnArchon } from '../../support/archon-process';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function reply(request: RecordedRequest): ScriptedReply {
  if (request.purpose === 'plan') return planReply([{ id: 'sum', description: 'add up the invoices' }]);
  if (request.purpose === 'lessons') {
    const runIds = [...requestText(request).matchAll(/^Run (\S+) \(/gm)].map((match) => match[1] as string);
    return { toolCalls: [{ name: 'submit_lessons', arguments: { lessons: [{ text: 'Totals first.', evidence: runIds, applies_to: 'sums' }] } }] };
  }
  return { content: 'The total is 60.' };
}

/** A data dir with one finished run against a fresh scripted server: something to dream. */
async function afterOneRun(): Promise<{ dataDir: string; common: string[]; url: string }> {
  server = await startModelServer({ reply });
  const dataDir = tempDir();
  const common = ['--model-url', server.url, '--data-dir', dataDir];
  const run = await spawnArchon(['run', 'Total the invoices', ...common, '--workspace', tempDir(), '--approve', 'auto'], { OPENAI_API_KEY: '' }).done;
  expect(run.status, run.stderr).toBe(0);
  return { dataDir, common, url: server.url };
}

function inStore<T>(dataDir: string, read: (store: ArchonStore) => T): T {
  const store = ArchonStore.open(dataDir);
  try {
    return read(store);
  } finally {
    store.close();
  }
}

const lessonRequests = () => server?.requests.filter((request) => request.purpose === 'lessons') ?? [];

describe('archon dream: a run of kind dream', () => {
  it('with the emergency stop latched sends nothing to the model server and exits 3', async () => {
    const { dataDir, common } = await afterOneRun();
    expect(runArchon(['estop', '--data-dir', dataDir]).status).toBe(0);
    const before = server?.requests.length;
    const dreamt = await spawnArchon(['dream', ...common], { OPENAI_API_KEY: '' }).done;
    expect(dreamt.status, dreamt.stderr).toBe(3);
    expect(dreamt.stderr).toMatch(/Emergency stop/);
    expect(server?.requests.length).toBe(before);
    expect(inStore(dataDir, (store) => store.runs.listRuns(10).map((run) => run.kind))).toEqual(['goal']);
  });

  it("is listed by `archon runs` with its kind, its lessons request is in model_calls (one row per request received), and the auditor records it", async () => {
    const { dataDir, common } = await afterOneRun();
    const dreamt = await spawnArchon(['dream', ...common], { OPENAI_API_KEY: '' }).done;
    expect(dreamt.status, dreamt.stderr).toBe(0);
    expect(dreamt.stdout).toContain('Stored 1 lesson(s).');

    const listed = runArchon(['runs', '--data-dir', dataDir]);
    expect(listed.stdout).toMatch(/^\S+ {2}dream {2}completed +\S+ {2}Learn lessons from 1 finished run\(s\)$/m);
    expect(listed.stdout).toMatch(/^\S+ {2}goal {3}completed +\S+ {2}Total the invoices$/m);
    const dreamRun = runArchon(['runs', '--json', '--data-dir', dataDir])
      .stdout.trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: string; kind: string })
      .find((run) => run.kind === 'dream');
    const rows = inStore(dataDir, (store) => store.db.prepare("SELECT run_id, status FROM model_calls WHERE purpose = 'lessons'").all());
    expect(rows).toEqual([{ run_id: dreamRun?.id, status: 'completed' }]);
    expect(lessonRequests()).toHaveLength(rows.length);

    const report = runArchon(['audit', 'report', dreamRun?.id ?? '', '--data-dir', dataDir]);
    expect(report.status, report.stderr).toBe(0);
    expect(report.stdout).toContain('Learn lessons from 1 finished run(s)');
  });

  it("is refused by the day's token cap: exit 4, no lessons request, the run left to dream later", async () => {
    const { dataDir, common } = await afterOneRun();
    inStore(dataDir, (store) => store.updateSettings({ dailyMaxTokens: 1 }));
    const dreamt = await spawnArchon(['dream', ...common], { OPENAI_API_KEY: '' }).done;
    expect(dreamt.status, dreamt.stderr).toBe(4);
    expect(dreamt.stdout).toMatch(/ended budget_exhausted: .*today's cap of 1 tokens/);
    expect(lessonRequests()).toHaveLength(0);
    expect(inStore(dataDir, (store) => store.dreams.undreamt(new Set(['completed']), 5))).toHaveLength(1);
  });

  it('under --policy supervised asks before its model call: --approve deny ends it rejected (exit 5) without the request', async () => {
    const { common } = await afterOneRun();
    const dreamt = await spawnArchon(['dream', ...common, '--policy', 'supervised', '--approve', 'deny'], { OPENAI_API_KEY: '' }).done;
    expect(dreamt.status, dreamt.stderr).toBe(5);
    expect(lessonRequests()).toHaveLength(0);
  });
});
