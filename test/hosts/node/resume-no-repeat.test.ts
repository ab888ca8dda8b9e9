import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { RunEventSchema, type RunEvent } from '../../../src/shared/schemas/events';
import { planReply, replanFailureReason, requestText, stepIdOf, type RecordedRequest, type ScriptedModelServer, type ScriptedReply } from '../../kit/scripted-model-server';
import { spawnArchon } from '../../support/archon-process';
import { useModelServers } from '../../support/model-servers';
import { useTempDirs } from '../../support/temp-dir';

// Real processes on a loaded 2-core machine: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 240_000 });
const tempDir = useTempDirs();
const serve = useModelServers();

const archon = (args: string[]) => spawnArchon(args, { OPENAI_API_KEY: '' });

function flags(server: ScriptedModelServer, dataDir: string, workspace: string): string[] {
  return ['--model-url', server.url, '--data-dir', dataDir, '--workspace', workspace, '--policy', 'permissive', '--approve', 'auto', '--json'];
}

function query<T>(dataDir: string, sql: string, ...params: unknown[]): T[] {
  // Read-write: a killed writer may leave a WAL that only a writer can recover.
  const db = new Database(join(dataDir, 'archon.db'));
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

function eventsOf(stdout: string): RunEvent[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => RunEventSchema.parse(JSON.parse(line)));
}

/** Each line of the workspace's ledger, with how many times it is there. */
function ledger(workspace: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of readFileSync(join(workspace, 'ledger.txt'), 'utf8').split('\n').filter(Boolean)) counts[line] = (counts[line] ?? 0) + 1;
  return counts;
}

function assistantTurns(request: RecordedRequest): number {
  return (request.body.messages ?? []).filter((message) => message.role === 'assistant').length;
}

const append = (mark: string): ScriptedReply => ({ toolCalls: [{ name: 'run_command', arguments: { command: `echo ${mark} >> ledger.txt` } }] });

describe('resume after a kill between a step failure and its re-plan', () => {
  it('continues the recovery: the failed step is re-planned, not run again, and its side effect happens once under --approve auto', async () => {
    let first: ReturnType<typeof archon> | null = null;
    const server = await serve({
      reply: (request) => {
        if (request.purpose === 'plan') return planReply([{ id: 'mark', description: 'Mark the ledger and read the data', expected_output: 'rows' }, { id: 'report', description: 'Summarize the rows', dependencies: ['mark'], expected_output: 'a summary' }]);
        if (request.purpose === 'replan') {
          // The first process dies here: step.failed is stored, plan.revised is not.
          if (first) {
            first.child.kill('SIGKILL');
            first = null;
            return { hang: true };
          }
          return planReply([{ id: 'rebuild', description: 'Rebuild the rows from the notes', expected_output: 'rows' }, { id: 'report', description: 'Summarize the rebuilt rows', dependencies: ['rebuild'], expected_output: 'a summary' }]);
        }
        if (request.purpose === 'final') return { content: 'summary of the rebuilt rows' };
        if (stepIdOf(request) !== 'mark') return { content: `result of ${stepIdOf(request) ?? '?'}` };
        // The mark is made once, then the step loops on a file that is not there and fails.
        return assistantTurns(request) === 0 ? append('MARK-once') : { toolCalls: [{ name: 'read_file', arguments: { path: 'missing/data.csv' } }] };
      },
    });
    const [dataDir, workspace] = [tempDir(), tempDir()];
    first = archon(['run', 'Report on the data', ...flags(server, dataDir, workspace)]);
    const killed = await first.done;
    expect(killed.status, killed.stderr).toBeNull();
    const [run] = query<{ id: string }>(dataDir, 'SELECT id FROM runs');
    const runId = run?.id as string;
    expect(query(dataDir, "SELECT status FROM steps WHERE run_id = ? AND id = 'mark'", runId)).toEqual([{ status: 'failed' }]);
    expect(query(dataDir, "SELECT count(*) AS n FROM events WHERE type = 'plan.revised'")).toEqual([{ n: 0 }]);
    expect(ledger(workspace)).toEqual({ 'MARK-once': 1 });

    const before = server.chatRequests.length;
    const resumed = await archon(['resume', runId, ...flags(server, dataDir, workspace)]).done;
    expect(resumed.status, resumed.stderr).toBe(0);
    const after = server.chatRequests.slice(before);
    expect(after.map((request) => (request.purpose === 'step' ? stepIdOf(request) : request.purpose))).toEqual(['replan', 'rebuild', 'report.r1', 'final']);
    expect(replanFailureReason(after[0] as RecordedRequest)).toMatch(/^loop_detected: read_file/);
    const events = eventsOf(resumed.stdout);
    expect(events[0]).toMatchObject({ type: 'run.resumed', rerunSteps: [], recoveringSteps: ['mark'] });
    expect(events.some((event) => event.type === 'approval.requested' && event.kind === 'resume_run')).toBe(false);
    expect(events.filter((event) => event.type === 'plan.revised')).toMatchObject([{ revision: 1, replaced: ['mark', 'report'], added: ['rebuild', 'report.r1'] }]);
    // The failure was measured before the kill: the resumed recovery does not measure it again.
    expect(query(dataDir, "SELECT count(*) AS n FROM events WHERE type = 'goal.progress'")).toEqual([{ n: 1 }]);
    expect(ledger(workspace)).toEqual({ 'MARK-once': 1 });
  });
});

const PARENT_GOAL = 'Write a short report on the capital of France';
const SUB_GOAL = 'Find the capital of France';
const CHILD_ANSWER = 'The capital of France is Paris (sub-agent).';
const isChild = (request: RecordedRequest) => /^Goal: Find the capital of France$/m.test(requestText(request));

describe('one driver per run tree', () => {
  it('`archon resume PARENT` and `archon resume CHILD` at once after kill -9 mid-child: one exits 2 naming the other (or waits); one child run; each side effect once', async () => {
    let first: ReturnType<typeof archon> | null = null;
    const server = await serve({
      reply: (request) => {
        if (request.purpose === 'plan') {
          if (isChild(request)) return planReply([{ id: 'first', description: 'child work first' }, { id: 'second', description: 'child work second', dependencies: ['first'] }]);
          return planReply([{ id: 'research', kind: 'subagent', goal: SUB_GOAL }, { id: 'report', description: 'Write the report', dependencies: ['research'] }]);
        }
        // Reached only if the parent took the child's lease for a failure: a second child would repeat the first one's work.
        if (request.purpose === 'replan') return planReply([{ id: 'research2', kind: 'subagent', goal: SUB_GOAL }, { id: 'report', description: 'Write the report', dependencies: ['research2'] }]);
        if (request.purpose === 'final') return { content: isChild(request) ? CHILD_ANSWER : 'Report: Paris.' };
        const id = stepIdOf(request) ?? '?';
        if (id === 'report') return { content: requestText(request).includes(CHILD_ANSWER) ? 'report written from the sub-agent' : 'no research' };
        if (id === 'second' && first) {
          first.child.kill('SIGKILL');
          first = null;
          return { hang: true };
        }
        return assistantTurns(request) === 0 ? append(`CHILD-${id}`) : { content: `${id} done` };
      },
    });
    const [dataDir, workspace] = [tempDir(), tempDir()];
    first = archon(['run', PARENT_GOAL, ...flags(server, dataDir, workspace)]);
    const killed = await first.done;
    expect(killed.status, killed.stderr).toBeNull();
    const runs = () => query<{ id: string; status: string; parent: string | null; step: string | null }>(dataDir, "SELECT id, status, json_extract(options_json, '$.parentRunId') AS parent, json_extract(options_json, '$.parentStepId') AS step FROM runs ORDER BY created_at");
    const [parent, child] = runs();
    expect(child).toMatchObject({ parent: parent?.id, step: 'research' });
    expect(ledger(workspace)).toEqual({ 'CHILD-first': 1 });

    const both = [archon(['resume', parent?.id as string, ...flags(server, dataDir, workspace)]), archon(['resume', child?.id as string, ...flags(server, dataDir, workspace)])];
    const ended = await Promise.all(both.map((process) => process.done));
    for (const [index, result] of ended.entries()) {
      expect([0, 2], result.stderr).toContain(result.status);
      if (result.status !== 2) continue;
      const other = both[1 - index]?.child.pid;
      expect(result.stderr).toMatch(new RegExp(`another Archon process \\(PID ${other}\\)`));
    }
    expect(ended.some((result) => result.status === 0)).toBe(true);
    // The parent refused (the child was being driven alone): resumed now, it takes the child's answer.
    if (runs()[0]?.status !== 'completed') expect((await archon(['resume', parent?.id as string, ...flags(server, dataDir, workspace)]).done).status).toBe(0);

    expect(runs().map(({ id, status, step }) => ({ id, status, step }))).toEqual([
      { id: parent?.id, status: 'completed', step: null },
      { id: child?.id, status: 'completed', step: 'research' },
    ]);
    expect(ledger(workspace)).toEqual({ 'CHILD-first': 1, 'CHILD-second': 1 });
    expect(server.chatRequests.filter((request) => request.purpose === 'replan')).toHaveLength(0);
    expect(query(dataDir, "SELECT count(*) AS n FROM events WHERE type = 'subagent.started'")).toEqual([{ n: 1 }]);
    expect(query(dataDir, "SELECT count(*) AS n FROM events WHERE type = 'step.failed'")).toEqual([{ n: 0 }]);
  });
});
