import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { planReply, requestText, stepIdOf, type RecordedRequest, type ScriptedModelServer, type ScriptedReply } from '../../kit/scripted-model-server';
import { spawnArchon } from '../../support/archon-process';
import { useModelServers } from '../../support/model-servers';
import { useTempDirs } from '../../support/temp-dir';

// Runs as processes on a loaded 2-core machine: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 240_000 });
const tempDir = useTempDirs();
const serve = useModelServers();

const PARENT_GOAL = 'Write a short report on the capital of France';
const SUB_GOAL = 'Find the capital of France';
const CHILD_ANSWER = 'The capital of France is Paris (sub-agent).';

const archon = (args: string[]) => spawnArchon(args, { OPENAI_API_KEY: '' });

function query<T>(dataDir: string, sql: string, ...params: unknown[]): T[] {
  // Read-write: a killed writer may leave a WAL that only a writer can recover.
  const db = new Database(join(dataDir, 'archon.db'));
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

const runsOf = (dataDir: string) =>
  query<{ id: string; goal: string; status: string; parent: string | null }>(dataDir, "SELECT id, goal, status, json_extract(options_json, '$.parentRunId') AS parent FROM runs ORDER BY created_at");

const isChild = (request: RecordedRequest) => /^Goal: Find the capital of France$/m.test(requestText(request));

/** The parent plans a sub-agent step and a report after it; the child plans `childSteps`; `step` answers the child's steps. */
function scripted(childSteps: string[], step: (id: string, request: RecordedRequest) => ScriptedReply) {
  return (request: RecordedRequest): ScriptedReply => {
    if (request.purpose === 'plan') {
      return isChild(request)
        ? planReply(childSteps.map((id, index) => ({ id, description: `child work ${id}`, dependencies: index === 0 ? [] : [childSteps[index - 1] as string] })))
        : planReply([{ id: 'research', kind: 'subagent', goal: SUB_GOAL }, { id: 'report', description: 'Write the report', dependencies: ['research'] }]);
    }
    if (request.purpose === 'final') return { content: isChild(request) ? CHILD_ANSWER : 'Report: Paris.' };
    const id = stepIdOf(request) ?? '?';
    return id === 'report' ? { content: requestText(request).includes(CHILD_ANSWER) ? 'report written from the sub-agent' : 'no research' } : step(id, request);
  };
}

function flags(server: ScriptedModelServer, dataDir: string, workspace: string): string[] {
  return ['--model-url', server.url, '--data-dir', dataDir, '--workspace', workspace, '--policy', 'permissive', '--approve', 'auto', '--json'];
}

describe('sub-agents through the built CLI', () => {
  it('a cap the child alone exceeds stops the child and the parent: exit 4, both budget_exhausted', async () => {
    const server = await serve({ reply: scripted(['lookup', 'check'], (id) => (id === 'lookup' ? { content: 'Paris', usage: { prompt_tokens: 30_000, completion_tokens: 10 } } : { content: 'checked' })) });
    const [dataDir, workspace] = [tempDir(), tempDir()];
    const run = await archon(['run', PARENT_GOAL, '--max-tokens', '30000', ...flags(server, dataDir, workspace)]).done;
    expect(run.status, run.stderr).toBe(4);
    const runs = runsOf(dataDir);
    expect(runs.map(({ goal, status }) => ({ goal, status }))).toEqual([
      { goal: PARENT_GOAL, status: 'budget_exhausted' },
      { goal: SUB_GOAL, status: 'budget_exhausted' },
    ]);
    expect(runs[1]?.parent).toBe(runs[0]?.id);
    expect(server.chatRequests.some((request) => ['check', 'report'].includes(stepIdOf(request) ?? ''))).toBe(false);

    const audit = await archon(['audit', 'report', runs[0]?.id as string, '--data-dir', dataDir, '--json']).done;
    expect(audit.status, audit.stderr).toBe(0);
    const report = JSON.parse(audit.stdout) as { runs: { runId: string; goal: string | null }[] };
    expect(report.runs.map(({ runId, goal }) => ({ runId, goal }))).toEqual(runs.map(({ id, goal }) => ({ runId: id, goal })));
  });

  it('`archon estop` stops the parent and its child: both end stopped, no model request after it', async () => {
    const server = await serve({ reply: scripted(['think'], () => ({ hang: true })) });
    const [dataDir, workspace] = [tempDir(), tempDir()];
    const run = archon(['run', PARENT_GOAL, ...flags(server, dataDir, workspace)]);
    await expect.poll(() => server.chatRequests.filter((request) => stepIdOf(request) === 'think').length, { timeout: 180_000, interval: 250 }).toBe(1);
    const requestsAtStop = server.chatRequests.length;
    const stop = await archon(['estop', '--data-dir', dataDir]).done;
    expect(stop.status, stop.stderr).toBe(0);
    const ended = await run.done;
    expect(ended.status, ended.stderr).toBe(3);
    expect(runsOf(dataDir).map(({ goal, status }) => ({ goal, status }))).toEqual([
      { goal: PARENT_GOAL, status: 'stopped' },
      { goal: SUB_GOAL, status: 'stopped' },
    ]);
    expect(query(dataDir, "SELECT count(*) AS n FROM events WHERE type = 'estop.triggered'")).toEqual([{ n: 2 }]);
    expect(server.chatRequests.length).toBe(requestsAtStop);
    await archon(['estop', '--reset', '--data-dir', dataDir]).done;
  });

  it('a parent resumed after kill -9 continues its child run (its completed step not redone) and never starts a second one', async () => {
    let secondTurns = 0;
    const server = await serve({
      reply: scripted(['first', 'second'], (id) => {
        if (id === 'first') return { content: 'first done' };
        return secondTurns++ === 0 ? { hang: true } : { content: 'second done' };
      }),
    });
    const [dataDir, workspace] = [tempDir(), tempDir()];
    const run = archon(['run', PARENT_GOAL, ...flags(server, dataDir, workspace)]);
    await expect.poll(() => secondTurns, { timeout: 180_000, interval: 100 }).toBe(1);
    run.child.kill('SIGKILL');
    await run.done;
    const [parent, child] = runsOf(dataDir);
    expect(child?.parent).toBe(parent?.id);

    const resumed = await archon(['resume', parent?.id as string, ...flags(server, dataDir, workspace)]).done;
    expect(resumed.status, resumed.stderr).toBe(0);
    const runs = runsOf(dataDir);
    expect(runs.map(({ id, status }) => ({ id, status }))).toEqual([
      { id: parent?.id, status: 'completed' },
      { id: child?.id, status: 'completed' },
    ]);
    expect(server.chatRequests.filter((request) => stepIdOf(request) === 'first')).toHaveLength(1);
    expect(server.chatRequests.filter((request) => request.purpose === 'plan' && isChild(request))).toHaveLength(1);
    const report = server.chatRequests.find((request) => stepIdOf(request) === 'report') as RecordedRequest;
    expect(requestText(report)).toContain(CHILD_ANSWER);
    expect(query(dataDir, "SELECT count(*) AS n FROM events WHERE type = 'subagent.started'")).toEqual([{ n: 1 }]);
  });
});
