import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { RunEventSchema } from '../../../src/shared/schemas/events';
import { planReply, startModelServer, stepIdOf, type RecordedRequest, type ScriptedModelServer, type ScriptedReply } from '../../kit/scripted-model-server';
import { spawnArchon } from '../../support/archon-process';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const archon = (args: string[]) => spawnArchon(args, { OPENAI_API_KEY: '' });

describe('archon run / resume', () => {
  it('runs a goal with --json: one event per line, seq strictly increasing, the answer at the end, exit 0', async () => {
    server = await startModelServer({
      reply: (request) => {
        if (request.purpose === 'plan') return planReply([{ id: 'calc', description: 'Compute 20% of 50', tool: 'calculator', args: { expression: '20% * 50' } }]);
        return { content: 'The answer is 10.' };
      },
    });
    const dataDir = tempDir();
    const { done } = archon(['run', 'Calculate 20% of 50', '--model-url', server.url, '--data-dir', dataDir, '--approve', 'auto', '--json']);
    const result = await done;
    expect(result.status, result.stderr).toBe(0);
    const events = result.stdout.trim().split('\n').map((line) => RunEventSchema.parse(JSON.parse(line)));
    expect(events[0]?.type).toBe('run.started');
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', answer: 'The answer is 10.' });
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
    expect(new Set(events.map((event) => event.runId)).size).toBe(1);
    expect(events.find((event) => event.type === 'tool.completed')).toMatchObject({ tool: 'calculator', stepId: 'calc', content: '10' });
  });

  it('prints the answer on stdout without --json', async () => {
    server = await startModelServer({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'a', description: 'think' }]) : { content: 'forty-two' }) });
    const result = await archon(['run', 'answer', '--model-url', server.url, '--data-dir', tempDir(), '--approve', 'auto']).done;
    expect(result.status).toBe(0);
    expect(result.stdout).toBe('forty-two\n');
    expect(result.stderr).toContain('Plan: 1 step(s)');
  });

  it('--verify critic asks a critic (purpose critic) after each step and prints its verdict; --verify is checked', async () => {
    server = await startModelServer({
      reply: (request) => {
        if (request.purpose === 'plan') return planReply([{ id: 'a', description: 'think' }]);
        if (request.purpose === 'critic') return { toolCalls: [{ name: 'submit_verdict', arguments: { verdict: 'pass', gap: 0, reason: 'Right.', confidence: 0.99 } }] };
        return { content: 'forty-two' };
      },
    });
    const result = await archon(['run', 'answer', '--model-url', server.url, '--data-dir', tempDir(), '--approve', 'auto', '--verify', 'critic']).done;
    expect(result.status, result.stderr).toBe(0);
    // The Meta-Validator's critic judges the plan before the step runs.
    expect(server.chatRequests.map((request) => request.purpose)).toEqual(['plan', 'critic', 'step', 'critic', 'final']);
    expect(result.stderr).toContain('validation pass (confidence 0.99)');
    expect((await archon(['run', 'answer', '--verify', 'maybe', '--data-dir', tempDir()]).done).status).toBe(2);
  });

  it('exits 2 when the model server cannot be reached, naming the URL and what to do', async () => {
    const closed = await startModelServer({ reply: [] });
    await closed.close();
    const dataDir = tempDir();
    const result = await archon(['run', 'anything', '--model-url', closed.url, '--data-dir', dataDir]).done;
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(closed.url);
    expect(result.stderr).toMatch(/ollama serve.*--model-url/s);
    const db = new Database(join(dataDir, 'archon.db'), { readonly: true });
    expect(db.prepare('SELECT count(*) AS n FROM runs').get()).toEqual({ n: 0 });
    db.close();
  });

  it('exits 1 when a step loops, without hanging', async () => {
    server = await startModelServer({
      reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'spin', description: 'spin' }]) : { toolCalls: [{ name: 'calculator', arguments: { expression: '1+1' } }] }),
    });
    const result = await archon(['run', 'loop', '--model-url', server.url, '--data-dir', tempDir(), '--approve', 'auto']).done;
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/loop_detected/);
  });

  it('exits 2 on a bad flag value, saying which', async () => {
    const result = await archon(['run', 'x', '--concurrency', '0', '--data-dir', tempDir()]).done;
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/--concurrency is a whole number from 1 to 64/);
  });

  it('survives kill -9: resume completes the run and does not request completed steps again', async () => {
    let hangSecond = true;
    server = await startModelServer({
      reply: (request: RecordedRequest): ScriptedReply => {
        if (request.purpose === 'plan') {
          return planReply([
            { id: 'first', description: 'the first part' },
            { id: 'second', description: 'the second part', dependencies: ['first'] },
            { id: 'third', description: 'the third part', dependencies: ['second'] },
          ]);
        }
        if (request.purpose === 'final') return { content: 'all three parts done' };
        if (stepIdOf(request) === 'second' && hangSecond) return { hang: true };
        return { content: `done: ${stepIdOf(request)}` };
      },
    });
    const dataDir = tempDir();
    const first = archon(['run', 'three parts', '--model-url', server.url, '--data-dir', dataDir, '--approve', 'auto', '--json']);
    await expect.poll(() => server?.chatRequests.some((request) => stepIdOf(request) === 'second'), { timeout: 15_000 }).toBe(true);
    first.child.kill('SIGKILL');
    const killed = await first.done;
    expect(killed.status).toBeNull();
    const runId = RunEventSchema.parse(JSON.parse(killed.stdout.split('\n')[0] as string)).runId;

    hangSecond = false;
    const before = server.chatRequests.length;
    const resumed = await archon(['resume', runId, '--data-dir', dataDir, '--approve', 'auto', '--json']).done;
    expect(resumed.status, resumed.stderr).toBe(0);
    const after = server.chatRequests.slice(before);
    expect(after.filter((request) => stepIdOf(request) === 'first')).toHaveLength(0);
    expect(after.filter((request) => request.purpose === 'plan')).toHaveLength(0);
    expect(after.map((request) => stepIdOf(request) ?? request.purpose)).toEqual(['second', 'third', 'final']);
    const events = resumed.stdout.trim().split('\n').map((line) => RunEventSchema.parse(JSON.parse(line)));
    expect(events[0]).toMatchObject({ type: 'run.resumed', completedSteps: ['first'] });
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', answer: 'all three parts done' });
    const firstSeq = killed.stdout.trim().split('\n').map((line) => RunEventSchema.parse(JSON.parse(line)).seq);
    expect(events[0]?.seq).toBeGreaterThan(Math.max(...firstSeq));
  });

  it('refuses to resume an unknown run or one that already ended', async () => {
    const dataDir = tempDir();
    const unknown = await archon(['resume', 'nope', '--data-dir', dataDir]).done;
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/no run nope.*archon runs/);
  });
});
