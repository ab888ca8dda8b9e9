import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { RunEventSchema, type RunEvent } from '../../../src/shared/schemas/events';
import { planReply, replanFailureReason, requestText, startModelServer, stepIdOf, type RecordedRequest, type ScriptedModelServer, type ScriptedReply } from '../../kit/scripted-model-server';
import { spawnArchon } from '../../support/archon-process';
import { ARCHON_BIN, builtFile } from '../../support/built';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A read of a file that is not there, every time: the step loops on it and fails. */
const readMissing: ScriptedReply = { toolCalls: [{ name: 'read_file', arguments: { path: 'missing/data.csv' } }] };

function events(stdout: string): RunEvent[] {
  return stdout
    .trim()
    .split('\n')
    .map((line) => RunEventSchema.parse(JSON.parse(line)));
}

function byStep(id: string): (request: RecordedRequest) => boolean {
  return (request) => request.purpose === 'step' && stepIdOf(request) === id;
}

describe('archon run: recovery from a failed step', () => {
  it('re-plans the failed subtree while the slow branch runs on, and exits 0', async () => {
    const turns = new Map<string, number>();
    server = await startModelServer({
      reply: (request) => {
        if (request.purpose === 'plan') {
          return planReply([
            { id: 'slow', description: 'Watch the slow source', expected_output: 'its state' },
            { id: 'fetch', description: 'Read the data file', expected_output: 'the rows' },
            { id: 'report', description: 'Summarize the rows', dependencies: ['fetch'], expected_output: 'a summary' },
          ]);
        }
        if (request.purpose === 'replan') return planReply([{ id: 'rebuild', description: 'Rebuild the rows from the notes', expected_output: 'the rows' }, { id: 'report', description: 'Summarize the rebuilt rows', dependencies: ['rebuild'], expected_output: 'a summary' }]);
        if (request.purpose === 'final') return { content: 'summary of the rebuilt rows' };
        const id = stepIdOf(request) ?? '?';
        const turn = turns.get(id) ?? 0;
        turns.set(id, turn + 1);
        if (id === 'slow') return turn === 0 ? { toolCalls: [{ name: 'calculator', arguments: { expression: '6*7' } }], delayMs: 400 } : { content: 'settled at 42', delayMs: 400 };
        if (id === 'fetch') return readMissing;
        return { content: `result of ${id}` };
      },
    });
    const result = await spawnArchon(['run', 'Report on the data', '--model-url', server.url, '--data-dir', tempDir(), '--workspace', tempDir(), '--approve', 'auto', '--json'], { OPENAI_API_KEY: '' }).done;
    expect(result.status, result.stderr).toBe(0);
    const emitted = events(result.stdout);
    const failure = emitted.find((event) => event.type === 'step.failed');
    expect(failure).toMatchObject({ stepId: 'fetch', reason: expect.stringMatching(/^loop_detected: read_file/) });
    const replans = server.chatRequests.filter((request) => request.purpose === 'replan');
    expect(replans).toHaveLength(1);
    expect(replanFailureReason(replans[0] as RecordedRequest)).toBe(failure?.type === 'step.failed' ? failure.reason : '?');
    expect(server.chatRequests.filter(byStep('slow'))).toHaveLength(2);
    expect(server.chatRequests.filter(byStep('rebuild'))).toHaveLength(1);
    expect(server.chatRequests.filter(byStep('report.r1'))).toHaveLength(1);
    expect(emitted.find((event) => event.type === 'plan.revised')).toMatchObject({ revision: 1, replaced: ['fetch', 'report'], added: ['rebuild', 'report.r1'] });
    expect(emitted.at(-1)).toMatchObject({ type: 'run.completed', answer: 'summary of the rebuilt rows' });
  });

  it('re-plans that never close the gap end at an escalation that --approve auto answers "end": exit 1, bounded, the gap trend in the diagnosis', async () => {
    let replans = 0;
    server = await startModelServer({
      reply: (request) => {
        if (request.purpose === 'plan') return planReply([{ id: 'prep', description: 'Prepare', expected_output: 'inputs' }, { id: 'solve', description: 'Solve from the data file', dependencies: ['prep'], expected_output: 'a solution' }]);
        if (request.purpose === 'replan') return planReply([{ id: 'solve', description: `Solve from the data file, try ${++replans + 1}`, dependencies: ['prep'], expected_output: 'a solution' }]);
        return stepIdOf(request) === 'prep' ? { content: 'ready' } : readMissing;
      },
    });
    const result = await spawnArchon(['run', 'Solve the unsolvable', '--model-url', server.url, '--data-dir', tempDir(), '--workspace', tempDir(), '--approve', 'auto'], { OPENAI_API_KEY: '' }).done;
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/Step solve\.r3 could not be completed: loop_detected.*gap trend 0\.50 → 0\.50 → 0\.50 → 0\.50/s);
    expect(result.stderr).toContain('Plan revision 1: solve replaced by solve.r1');
    expect(result.stderr).toContain('! escalation at solve.r3: neither re-plans nor a change of strategy closed the gap to the goal; gap trend 0.50 → 0.50 → 0.50 → 0.50');
    expect(server.chatRequests.filter((request) => request.purpose === 'replan')).toHaveLength(3);
    // 1 plan + 1 prep + 4 failing steps × 3 calls + 3 re-plans.
    expect(server.chatRequests).toHaveLength(17);
  });
});

describe('archon resume after kill -9 mid-recovery', () => {
  it('a run killed while its replacement step runs resumes with the revised plan: nothing re-planned, the replaced step not run again', async () => {
    let hangReplacement = true;
    server = await startModelServer({
      reply: (request) => {
        if (request.purpose === 'plan') return planReply([{ id: 'fetch', description: 'Read the data file', expected_output: 'rows' }, { id: 'report', description: 'Summarize the rows', dependencies: ['fetch'], expected_output: 'a summary' }]);
        if (request.purpose === 'replan') return planReply([{ id: 'rebuild', description: 'Rebuild the rows from the notes', expected_output: 'rows' }, { id: 'report', description: 'Summarize the rebuilt rows', dependencies: ['rebuild'], expected_output: 'a summary' }]);
        if (request.purpose === 'final') return { content: 'summary of the rebuilt rows' };
        const id = stepIdOf(request);
        if (id === 'fetch') return readMissing;
        if (id === 'rebuild' && hangReplacement) return { hang: true };
        return { content: `result of ${id ?? '?'}` };
      },
    });
    const dataDir = tempDir();
    const workspace = tempDir();
    const first = spawnArchon(['run', 'Report on the data', '--model-url', server.url, '--data-dir', dataDir, '--workspace', workspace, '--approve', 'auto', '--json'], { OPENAI_API_KEY: '' });
    await expect.poll(() => server?.chatRequests.some(byStep('rebuild')), { timeout: 15_000 }).toBe(true);
    first.child.kill('SIGKILL');
    const killed = await first.done;
    expect(killed.status).toBeNull();
    const runId = RunEventSchema.parse(JSON.parse(killed.stdout.split('\n')[0] as string)).runId;

    hangReplacement = false;
    const before = server.chatRequests.length;
    const resumed = await spawnArchon(['resume', runId, '--data-dir', dataDir, '--approve', 'auto', '--json'], { OPENAI_API_KEY: '' }).done;
    expect(resumed.status, resumed.stderr).toBe(0);
    const after = server.chatRequests.slice(before);
    expect(after.map((request) => (request.purpose === 'step' ? stepIdOf(request) : request.purpose))).toEqual(['rebuild', 'report.r1', 'final']);
    const emitted = events(resumed.stdout);
    expect(emitted[0]).toMatchObject({ type: 'run.resumed', completedSteps: [], rerunSteps: [] });
    expect(emitted.at(-1)).toMatchObject({ type: 'run.completed', answer: 'summary of the rebuilt rows' });
  });
});

describe('the terminal at an escalation', () => {
  it('offers retry, skip, edit or end; an edited step runs with the new description and the run completes', async () => {
    server = await startModelServer({
      reply: (request) => {
        if (request.purpose === 'plan') return planReply([{ id: 'solve', description: 'Solve from the data file', expected_output: 'a solution' }]);
        if (request.purpose === 'replan') return planReply([{ id: 'solve', description: 'Solve from the data file again', expected_output: 'a solution' }]);
        if (request.purpose === 'final') return { content: 'The product is 42.' };
        return requestText(request).includes('Compute 6*7') ? { content: '42' } : readMissing;
      },
    });
    builtFile('node/cli.js');
    const child = spawn(process.execPath, [ARCHON_BIN, 'run', 'Find the product', '--model-url', server.url, '--data-dir', tempDir(), '--workspace', tempDir(), '--policy', 'permissive', '--approve', 'prompt'], {
      env: { ...process.env, OPENAI_API_KEY: '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const answers: [string, string][] = [
      ['or end the run? [r/s/e/N] ', 'e'],
      ['New description of the step: ', 'Compute 6*7 with the calculator'],
      ['Expected output (optional): ', 'the product'],
      ['Approve? [y/N] ', 'y'],
    ];
    let stderr = '';
    let stdout = '';
    let answeredUpTo = 0;
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    // Each answer is typed once its prompt is on the screen, as a person would.
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      for (let next = answers[0], at = next ? stderr.indexOf(next[0], answeredUpTo) : -1; next && at >= 0; next = answers[0], at = next ? stderr.indexOf(next[0], answeredUpTo) : -1) {
        answeredUpTo = at + next[0].length;
        answers.shift();
        child.stdin.write(`${next[1]}\n`);
      }
    });
    const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(status, stderr).toBe(0);
    expect(answers).toEqual([]);
    expect(stderr).toMatch(/Escalation: Step solve\.r3 still fails/);
    expect(stdout).toBe('The product is 42.\n');
    const edited = server.chatRequests.filter((request) => request.purpose === 'step' && requestText(request).includes('Compute 6*7'));
    expect(edited).toHaveLength(1);
    expect(requestText(edited[0] as RecordedRequest)).toContain('Expected output: the product');
  });
});
