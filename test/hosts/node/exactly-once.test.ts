import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ArchonStore } from '../../../src/core/store/archon-store';
import { RunEventSchema, type RunEvent } from '../../../src/shared/schemas/events';
import type { SettingsPatch } from '../../../src/shared/schemas/settings';
import { planReply, stepIdOf, type RecordedRequest, type ScriptedModelServer, type ScriptedReply } from '../../kit/scripted-model-server';
import { spawnArchon } from '../../support/archon-process';
import { processesMatching, uniqueSleepSeconds } from '../../support/processes';
import { crashScenarioReply, onlyRunId } from '../../support/crash-scenario';
import { useModelServers } from '../../support/model-servers';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
const serve = useModelServers();

const archon = (args: string[]) => spawnArchon(args, { OPENAI_API_KEY: '' });

function settle(dataDir: string, patch: SettingsPatch): void {
  const store = ArchonStore.open(dataDir);
  store.updateSettings(patch);
  store.close();
}

function eventsOf(stdout: string): RunEvent[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => RunEventSchema.parse(JSON.parse(line)));
}

/** Resolves once the process has printed an event of this type on stdout (--json). */
function whenEvent(child: ReturnType<typeof archon>['child'], type: string): Promise<void> {
  return new Promise((resolve) => {
    let seen = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      if (seen.includes(`"type":"${type}"`)) resolve();
    });
  });
}

function flags(server: ScriptedModelServer, dataDir: string, workspace: string): string[] {
  return ['--model-url', server.url, '--data-dir', dataDir, '--workspace', workspace, '--policy', 'permissive', '--approve', 'auto', '--json'];
}

describe('one process drives a run', () => {
  it('two `archon resume` of one run at once: one runs it, the other exits 2 naming the PID; nothing is repeated', async () => {
    const server = await serve({ reply: crashScenarioReply, latencyMs: 150 });
    const [dataDir, workspace] = [tempDir(), tempDir()];
    const first = archon(['run', 'mark the ledger', ...flags(server, dataDir, workspace)]);
    await whenEvent(first.child, 'tool.completed');
    first.child.kill('SIGKILL');
    await first.done;
    const runId = onlyRunId(dataDir) as string;
    // A call the kill cut short is not repeated under --approve auto: the gap is accepted beforehand (exit 7), or there was none (exit 0).
    const [a, b] = [archon(['resume', runId, ...flags(server, dataDir, workspace), '--accept-gaps']), archon(['resume', runId, ...flags(server, dataDir, workspace), '--accept-gaps'])];
    const results = await Promise.all([a.done, b.done]);
    const winner = results.find((result) => result.status === 0 || result.status === 7);
    const loser = results.find((result) => result.status === 2);
    expect(winner, JSON.stringify(results)).toBeDefined();
    expect(loser?.stderr).toMatch(new RegExp(`another Archon process \\(PID (${a.child.pid}|${b.child.pid})\\)`));
    expect(`${winner?.stderr}${loser?.stderr}`).not.toMatch(/UNIQUE constraint|Unhandled|SqliteError/);
    const marks = readFileSync(join(workspace, 'ledger.txt'), 'utf8').trim().split('\n');
    expect(new Set(marks).size).toBe(marks.length);
  });
});

describe('outages pause, they do not fail', () => {
  function slowSteps(request: RecordedRequest): ScriptedReply {
    if (request.purpose === 'plan') return planReply([{ id: 'one', description: 'first' }, { id: 'two', description: 'second', dependencies: ['one'] }]);
    return request.purpose === 'final' ? { content: 'done after the outage' } : { content: `result of ${stepIdOf(request)}` };
  }

  it('a server down for 20 s mid-run and back on the same port: the run completes, exit 0', async () => {
    const server = await serve({ reply: slowSteps });
    const port = Number(new URL(server.url).port);
    const [dataDir, workspace] = [tempDir(), tempDir()];
    const run = archon(['run', 'survive an outage', ...flags(server, dataDir, workspace)]);
    await whenEvent(run.child, 'step.completed');
    await server.close();
    await new Promise((resolve) => setTimeout(resolve, 20_000));
    await serve({ reply: slowSteps, port });
    const result = await run.done;
    expect(result.status, result.stderr).toBe(0);
    const events = eventsOf(result.stdout);
    expect(events.some((event) => event.type === 'model.attempt_failed')).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', answer: 'done after the outage' });
  }, 120_000);

  it('down for longer than the retry window: exit 6 with run.paused; `archon resume` once it is back completes the run', async () => {
    let server = await serve({ reply: slowSteps });
    const port = Number(new URL(server.url).port);
    const [dataDir, workspace] = [tempDir(), tempDir()];
    settle(dataDir, { modelRetryWindowSeconds: 1 });
    const run = archon(['run', 'pause on an outage', ...flags(server, dataDir, workspace)]);
    await whenEvent(run.child, 'step.completed');
    await server.close();
    const paused = await run.done;
    expect(paused.status, paused.stderr).toBe(6);
    expect(eventsOf(paused.stdout).at(-1)).toMatchObject({ type: 'run.paused', reason: expect.stringMatching(/did not answer/), whatToDo: expect.stringContaining('archon resume') });
    server = await serve({ reply: slowSteps, port });
    const runId = onlyRunId(dataDir) as string;
    const resumed = await archon(['resume', runId, ...flags(server, dataDir, workspace)]).done;
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(server.chatRequests.filter((request) => request.purpose === 'step').map(stepIdOf)).not.toContain('one');
  });

  it('a server that accepts and never answers: the first-byte timeout ends the attempt and the run pauses', async () => {
    const server = await serve({ reply: (request) => (request.purpose === 'plan' ? { hang: true } : { content: 'never' }) });
    const [dataDir, workspace] = [tempDir(), tempDir()];
    settle(dataDir, { modelFirstByteTimeoutSeconds: 1, modelRetryWindowSeconds: 0 });
    const result = await archon(['run', 'hang', ...flags(server, dataDir, workspace)]).done;
    expect(result.status, result.stderr).toBe(6);
    expect(eventsOf(result.stdout)).toContainEqual(expect.objectContaining({ type: 'model.attempt_failed', error: expect.stringMatching(/first-byte timeout/) }));
  });

  it('SIGINT stops a run waiting on a silent server at once (exit 3)', async () => {
    const server = await serve({ reply: (request) => (request.purpose === 'plan' ? { hang: true } : { content: 'never' }) });
    const [dataDir, workspace] = [tempDir(), tempDir()];
    const run = archon(['run', 'hang', ...flags(server, dataDir, workspace)]);
    await expect.poll(() => server.stats.inFlight, { timeout: 20_000 }).toBe(1);
    run.child.kill('SIGINT');
    const result = await run.done;
    expect(result.status).toBe(3);
    await expect.poll(() => server.stats.aborted).toBe(1);
  });
});

describe('nothing crashes the runtime', () => {
  it('a tool worker killed mid-call: the call returns error, the run goes on to the end, and the unknown outcome is a stated gap', async () => {
    const seconds = uniqueSleepSeconds();
    const server = await serve({
      reply: (request) => {
        if (request.purpose === 'plan') return planReply([{ id: 'slow', description: 'run something slow' }]);
        if (request.purpose === 'final') return { content: 'went on' };
        const turns = (request.body.messages ?? []).filter((message) => message.role === 'assistant').length;
        return turns === 0 ? { toolCalls: [{ name: 'run_command', arguments: { command: `sleep ${seconds}` } }] } : { content: 'the worker died; carried on' };
      },
    });
    const [dataDir, workspace] = [tempDir(), tempDir()];
    const run = archon(['run', 'survive a dead worker', ...flags(server, dataDir, workspace)]);
    await expect.poll(() => processesMatching(`sleep ${seconds}`).length, { timeout: 20_000 }).toBeGreaterThan(0);
    const workers = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(run.child.pid)], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.includes('executor.js'))
      .map((line) => Number(line.trim().split(/\s+/)[0]));
    expect(workers.length).toBeGreaterThan(0);
    for (const pid of workers) process.kill(pid, 'SIGKILL');
    const result = await run.done;
    // The command may or may not have done its work: the run does not end a plain success (--approve auto accepts no gap).
    expect(result.status, result.stderr).toBe(1);
    expect(eventsOf(result.stdout).at(-1)).toMatchObject({ type: 'run.failed', error: expect.stringContaining('run_command in step slow may or may not have happened') });
    expect(result.stderr).not.toMatch(/EPIPE|Unhandled/);
    expect(eventsOf(result.stdout)).toContainEqual(expect.objectContaining({ type: 'tool.completed', tool: 'run_command', status: 'error' }));
    expect(readFileSync(join(dataDir, 'logs', 'archon.log'), 'utf8')).toContain('a tool worker died');
  });

  it('an invalid stored setting refuses to start a run, naming the setting and the value; nothing falls back', async () => {
    const server = await serve({ reply: [] });
    const dataDir = tempDir();
    const store = ArchonStore.open(dataDir);
    store.db.prepare("INSERT INTO settings (key, value_json) VALUES ('disabledTools', '[\"run_command\"')").run();
    store.close();
    const result = await archon(['run', 'anything', ...flags(server, dataDir, tempDir())]).done;
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/"disabledTools".*\[\\"run_command\\".*No run starts until it is fixed/s);
    expect(server.chatRequests).toHaveLength(0);
  });
});

describe('failed and stopped runs can be resumed', () => {
  it('`archon resume` of a failed run re-runs only its failed and skipped steps', async () => {
    let healthy = false;
    const server = await serve({
      reply: (request) => {
        if (request.purpose === 'plan') return planReply([{ id: 'good', description: 'works' }, { id: 'bad', description: 'breaks' }, { id: 'after', description: 'needs bad', dependencies: ['bad'] }]);
        if (request.purpose === 'final') return { content: 'all three done' };
        const step = stepIdOf(request);
        if (step === 'bad' && !healthy) return { toolCalls: [{ name: 'calculator', arguments: { expression: '1+' } }] };
        return { content: `result of ${step}` };
      },
    });
    const [dataDir, workspace] = [tempDir(), tempDir()];
    const failed = await archon(['run', 'partly fails', ...flags(server, dataDir, workspace), '--max-iterations', '1']).done;
    expect(failed.status, failed.stderr).toBe(1);
    healthy = true;
    const before = server.chatRequests.filter((request) => request.purpose === 'step').map(stepIdOf);
    const resumed = await archon(['resume', onlyRunId(dataDir) as string, ...flags(server, dataDir, workspace)]).done;
    expect(resumed.status, resumed.stderr).toBe(0);
    const after = server.chatRequests.filter((request) => request.purpose === 'step').map(stepIdOf).slice(before.length);
    expect(after.sort()).toEqual(['after', 'bad']);
    const events = eventsOf(resumed.stdout);
    expect(events).toContainEqual(expect.objectContaining({ type: 'run.resumed', completedSteps: ['good'], rerunSteps: ['bad', 'after'] }));
    expect(events).toContainEqual(expect.objectContaining({ type: 'approval.requested', kind: 'resume_run' }));
  });
});

describe('repairs across a crash', () => {
  it('archon killed while the model works on a repair: the resumed step goes on counting its repairs, not afresh', async () => {
    let stepRequests = 0;
    const server = await serve({
      reply: (request) => {
        if (request.purpose === 'plan') return planReply([{ id: 'n', description: 'count the files', expected_output: 'a number' }]);
        // No usable re-plan: once its repairs are spent the step goes to the escalation, which --approve auto ends.
        if (request.purpose === 'replan') return { content: 'no plan' };
        stepRequests++;
        // The first process dies while the model works on repair 1.
        return stepRequests === 2 ? { hang: true } : { content: 'several' };
      },
    });
    const [dataDir, workspace] = [tempDir(), tempDir()];
    const first = archon(['run', 'count', ...flags(server, dataDir, workspace)]);
    await expect.poll(() => stepRequests, { timeout: 20_000 }).toBe(2);
    first.child.kill('SIGKILL');
    expect(eventsOf((await first.done).stdout).filter((event) => event.type === 'step.retried')).toMatchObject([{ stepId: 'n', repair: 1 }]);
    const resumed = await archon(['resume', onlyRunId(dataDir) as string, ...flags(server, dataDir, workspace)]).done;
    expect(resumed.status, resumed.stderr).toBe(1);
    const events = eventsOf(resumed.stdout);
    expect(events.filter((event) => event.type === 'step.retried')).toMatchObject([{ stepId: 'n', repair: 2 }]);
    expect(events.find((event) => event.type === 'step.failed')).toMatchObject({ stepId: 'n', reason: expect.stringContaining('after 2 repair(s)') });
    // The answer to repair 1, then repair 2's: a budget counted afresh would have asked twice more.
    expect(stepRequests).toBe(4);
  });
});
