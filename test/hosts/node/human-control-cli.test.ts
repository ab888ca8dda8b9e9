import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { planReply, startModelServer, stepIdOf, type RecordedRequest, type ScriptedModelServer, type ScriptedReply } from '../../kit/scripted-model-server';
import { eventsOf, spawnArchon } from '../../support/archon-process';
import { processesMatching, uniqueSleepSeconds } from '../../support/processes';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function dbOf(dataDir: string) {
  return new Database(join(dataDir, 'archon.db'), { readonly: true });
}

describe('archon run: approvals from the --approve flag', () => {
  it('balanced with --approve deny: a side-effecting write never executes; exit 5', async () => {
    server = await startModelServer({
      reply: (request) =>
        request.purpose === 'plan'
          ? planReply([{ id: 'w', description: 'write the file', tool: 'write_file', args: { path: 'out.txt', content: 'x' } }])
          : { toolCalls: [{ name: 'write_file', arguments: { path: 'out.txt', content: 'x' } }] },
    });
    const workspace = tempDir();
    const dataDir = tempDir();
    const result = await spawnArchon(['run', 'write a file', '--model-url', server.url, '--data-dir', dataDir, '--workspace', workspace, '--approve', 'deny', '--json']).done;
    expect(result.status).toBe(5);
    expect(existsSync(join(workspace, 'out.txt'))).toBe(false);
    expect(eventsOf(result.stdout).at(-1)).toMatchObject({ type: 'run.failed', error: expect.stringContaining('rejected') });
    const db = dbOf(dataDir);
    expect(db.prepare("SELECT count(*) AS n FROM tool_calls WHERE status = 'success'").get()).toEqual({ n: 0 });
    db.close();
  });

  it('permissive with --approve deny: an irreversible tool still asks (and does not run); the final answer is rejected; exit 5', async () => {
    const seconds = uniqueSleepSeconds();
    server = await startModelServer({
      reply: (request) => {
        if (request.purpose === 'plan') return planReply([{ id: 'c', description: 'run a command' }]);
        if (request.purpose === 'final') return { content: 'all done' };
        return request.body.messages?.some((message) => message.role === 'tool') ? { content: 'could not run it' } : { toolCalls: [{ name: 'run_command', arguments: { command: `sleep ${seconds}` } }] };
      },
    });
    const dataDir = tempDir();
    const result = await spawnArchon(['run', 'permissive', '--model-url', server.url, '--data-dir', dataDir, '--workspace', tempDir(), '--policy', 'permissive', '--approve', 'deny', '--json']).done;
    expect(result.status).toBe(5);
    const kinds = eventsOf(result.stdout).flatMap((event) => (event.type === 'approval.requested' ? [event.kind] : []));
    expect(kinds).toEqual(['tool_call', 'final_answer']);
    expect(processesMatching(`sleep ${seconds}`)).toEqual([]);
  });
});

describe('archon run: budgets', () => {
  it('--max-tokens 3000 on a token-hungry run exits 4; usage overshoots the cap by at most one in-flight request', async () => {
    let call = 0;
    server = await startModelServer({
      reply: (request) => {
        if (request.purpose === 'plan') return { ...planReply(['a', 'b', 'c'].map((id) => ({ id, description: `hungry ${id}` }))), usage: { prompt_tokens: 200, completion_tokens: 100 } };
        return { toolCalls: [{ name: 'calculator', arguments: { expression: `${call++}+1` } }], usage: { prompt_tokens: 700, completion_tokens: 150 } };
      },
      latencyMs: 20,
    });
    const dataDir = tempDir();
    const result = await spawnArchon(['run', 'burn tokens', '--model-url', server.url, '--data-dir', dataDir, '--workspace', tempDir(), '--approve', 'auto', '--max-tokens', '3000', '--max-iterations', '50', '--json']).done;
    expect(result.status, result.stderr).toBe(4);
    const db = dbOf(dataDir);
    const { used } = db.prepare('SELECT SUM(tokens) AS used FROM budget_ledger').get() as { used: number };
    const { largest } = db.prepare('SELECT MAX(tokens) AS largest FROM budget_ledger').get() as { largest: number };
    db.close();
    const overshoot = Math.max(0, used - 3000);
    console.log(`budget: cap 3000 tokens, recorded ${used}, overshoot ${overshoot} (largest single request ${largest})`);
    expect(overshoot).toBeLessThanOrEqual(largest);
    const all = eventsOf(result.stdout);
    expect(all.some((event) => event.type === 'budget.updated')).toBe(true);
    expect(all.some((event) => event.type === 'budget.warning')).toBe(true);
    expect(all.at(-1)).toMatchObject({ type: 'run.failed', error: expect.stringMatching(/Budget exhausted.*3000 tokens/) });
  });
});

describe('archon run: the emergency stop', () => {
  async function busyRun(dataDir: string, seconds: string) {
    const hangs: RecordedRequest[] = [];
    server = await startModelServer({
      reply: (request): ScriptedReply => {
        if (request.purpose === 'plan') {
          return planReply([
            ...[1, 2, 3].map((index) => ({ id: `cmd${index}`, description: `long command ${index}`, tool: 'run_command', args: { command: `(sleep ${seconds} &) ; sleep ${seconds}` } })),
            { id: 'think', description: 'think forever' },
          ]);
        }
        if (stepIdOf(request) === 'think') hangs.push(request);
        return { hang: true };
      },
    });
    const run = spawnArchon(['run', 'busy', '--model-url', server.url, '--data-dir', dataDir, '--workspace', tempDir(), '--approve', 'auto', '--concurrency', '4', '--json']);
    await expect.poll(() => processesMatching(`sleep ${seconds}`).filter((line) => !line.includes('/bin/sh')).length, { timeout: 10_000 }).toBe(6);
    await expect.poll(() => server?.stats.inFlight, { timeout: 5000 }).toBeGreaterThanOrEqual(1);
    return run;
  }

  async function expectStopped(run: ReturnType<typeof spawnArchon>, seconds: string, triggeredBy: string, since: number) {
    const result = await run.done;
    console.log(`emergency stop (${triggeredBy}): exit ${result.status} after ${Date.now() - since} ms`);
    expect(result.status, result.stderr).toBe(3);
    expect(processesMatching(`sleep ${seconds}`)).toEqual([]);
    const all = eventsOf(result.stdout);
    expect(all).toContainEqual(expect.objectContaining({ type: 'estop.triggered', triggeredBy }));
    expect(all.at(-1)).toMatchObject({ type: 'run.stopped' });
    await expect.poll(() => server?.stats.inFlight).toBe(0);
  }

  it('SIGINT: exit 3, no process left, estop.triggered and run.stopped; nothing starts while latched; --reset starts nothing', async () => {
    const dataDir = tempDir();
    const seconds = uniqueSleepSeconds();
    const run = await busyRun(dataDir, seconds);
    const since = Date.now();
    run.child.kill('SIGINT');
    await expectStopped(run, seconds, 'signal', since);

    const requestsBefore = server?.requests.length;
    const refused = await spawnArchon(['run', 'another', '--model-url', server?.url as string, '--data-dir', dataDir, '--approve', 'auto']).done;
    expect(refused.status).toBe(3);
    expect(refused.stderr).toMatch(/Emergency stop.*archon estop --reset/);
    expect(server?.requests.length).toBe(requestsBefore);

    const reset = await spawnArchon(['estop', '--reset', '--data-dir', dataDir]).done;
    expect(reset.stdout).toContain('Nothing was restarted');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(server?.requests.length).toBe(requestsBefore);
    const db = dbOf(dataDir);
    expect(db.prepare('SELECT status FROM runs').all()).toEqual([{ status: 'stopped' }]);
    db.close();
  });

  it('`archon estop` from another process stops the run', async () => {
    const dataDir = tempDir();
    const seconds = uniqueSleepSeconds();
    const run = await busyRun(dataDir, seconds);
    const stop = await spawnArchon(['estop', '--data-dir', dataDir, '--reason', 'operator at the terminal']).done;
    const since = Date.now();
    expect(stop.status).toBe(0);
    await expectStopped(run, seconds, 'cli', since);
  });
});
