import { afterEach, describe, expect, it } from 'vitest';
import { ArchonStore } from '../../../src/core/store/archon-store';
import { planReply, requestText, startModelServer, type RecordedRequest, type ScriptedModelServer, type ScriptedReply } from '../../kit/scripted-model-server';
import { spawnArchon } from '../../support/archon-process';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const CRITIC_REASON = 'The sum is missing: the step asks for the total of the three invoices.';
const LESSON = 'When totalling invoices, state the total itself, not only the amounts.';

function verdict(answer: { verdict: 'pass' | 'fail'; gap: number; reason: string }): ScriptedReply {
  return { toolCalls: [{ name: 'submit_verdict', arguments: { ...answer, confidence: 0.9 } }] };
}

/** Each run's step: the critic fails its first answer (repaired once), passes the second; the Dreamer answers with one lesson on the runs it was shown. */
function script(): (request: RecordedRequest) => ScriptedReply {
  const steps = new Map<string, number>();
  return (request) => {
    const text = requestText(request);
    if (request.purpose === 'lessons') {
      const runIds = [...text.matchAll(/^Run (\S+) \(/gm)].map((match) => match[1] as string);
      return { toolCalls: [{ name: 'submit_lessons', arguments: { lessons: [{ text: LESSON, evidence: runIds, applies_to: 'totalling invoices' }] } }] };
    }
    if (request.purpose === 'plan') return planReply([{ id: 'sum', description: 'add up the three invoices' }]);
    if (request.purpose === 'final') return { content: 'The total is 60.' };
    if (request.purpose === 'critic' && text.includes('Criteria: The plan covers the goal')) return verdict({ verdict: 'pass', gap: 0, reason: 'Covers it.' });
    if (request.purpose === 'critic' && text.includes('Criteria: The goal is reached')) return verdict({ verdict: 'fail', gap: 0.5, reason: 'Half done.' });
    if (request.purpose === 'critic') return text.includes('The total is 60.') ? verdict({ verdict: 'pass', gap: 0, reason: 'Correct.' }) : verdict({ verdict: 'fail', gap: 0.6, reason: CRITIC_REASON });
    const goal = /Goal: (.*)/.exec(text)?.[1] ?? '';
    const turn = steps.get(goal) ?? 0;
    steps.set(goal, turn + 1);
    return { content: turn === 0 ? 'The invoices are 10, 20 and 30.' : 'The total is 60.' };
  };
}

describe('archon dream', () => {
  it('after a run whose step failed validation and was repaired, stores a lesson whose evidence names that run; a second dream finds nothing new; the next similar run plans with the lesson recalled', async () => {
    server = await startModelServer({ reply: script() });
    const dataDir = tempDir();
    const common = ['--model-url', server.url, '--data-dir', dataDir];
    const workspace = tempDir();
    const run = await spawnArchon(['run', 'Total the three invoices', ...common, '--workspace', workspace, '--approve', 'auto', '--verify', 'critic', '--json'], { OPENAI_API_KEY: '' }).done;
    expect(run.status, run.stderr).toBe(0);
    const runId = /"runId":"([^"]+)"/.exec(run.stdout)?.[1] ?? '';
    expect(run.stdout).toContain('"type":"step.retried"');
    // The CLI's run does not dream: its exit is never held up by the Dreamer.
    expect(server.chatRequests.filter((request) => request.purpose === 'lessons')).toHaveLength(0);

    const dreamt = await spawnArchon(['dream', ...common], { OPENAI_API_KEY: '' }).done;
    expect(dreamt.status, dreamt.stderr).toBe(0);
    expect(dreamt.stdout).toContain(`Dreamt 1 run(s): ${runId}. Stored 1 lesson(s).`);
    expect(dreamt.stdout).toContain(LESSON);
    const asked = server.chatRequests.filter((request) => request.purpose === 'lessons');
    expect(asked).toHaveLength(1);
    expect(requestText(asked[0] as RecordedRequest)).toContain(`Repair 1 of sum: ${CRITIC_REASON}`);

    const store = ArchonStore.open(dataDir);
    try {
      expect(store.memory.list({ kind: 'lesson', limit: 10 })).toMatchObject([{ text: LESSON, evidence: [runId], source: { runId } }]);
    } finally {
      store.close();
    }

    const again = await spawnArchon(['dream', ...common], { OPENAI_API_KEY: '' }).done;
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout).toContain('Nothing new to dream');
    expect(server.chatRequests.filter((request) => request.purpose === 'lessons')).toHaveLength(1);

    // The next similar run in the same workspace (the lesson's evidence worked there) plans with the lesson in its request, and says it recalled it.
    const next = await spawnArchon(['run', 'Total the invoices of April', ...common, '--workspace', workspace, '--approve', 'auto', '--json'], { OPENAI_API_KEY: '' }).done;
    expect(next.status, next.stderr).toBe(0);
    const plans = server.chatRequests.filter((request) => request.purpose === 'plan').map(requestText);
    expect(plans).toHaveLength(2);
    expect(plans[1]).toContain('Relevant memory');
    expect(plans[1]).toContain(LESSON);
    const lessonId = /^lesson (\S+):/m.exec(dreamt.stdout)?.[1];
    const recalled = next.stdout
      .split('\n')
      .filter((line) => line.includes('"type":"memory.recalled"'))
      .map((line) => JSON.parse(line) as { stepId?: string; items: { id: string; kind: string; source: { runId: string } | null }[] });
    expect(recalled[0]?.stepId).toBeUndefined();
    expect(recalled[0]?.items).toContainEqual(expect.objectContaining({ id: lessonId, kind: 'lesson', source: { runId, stepId: null } }));
  });

  it('says so and exits 2 when the model server is unreachable, and leaves the run to dream later', async () => {
    server = await startModelServer({ reply: script() });
    const dataDir = tempDir();
    const run = await spawnArchon(['run', 'Total the three invoices', '--model-url', server.url, '--data-dir', dataDir, '--workspace', tempDir(), '--approve', 'auto'], { OPENAI_API_KEY: '' }).done;
    expect(run.status, run.stderr).toBe(0);
    const url = server.url;
    await server.close();
    server = undefined;
    const dreamt = await spawnArchon(['dream', '--model-url', url, '--data-dir', dataDir], { OPENAI_API_KEY: '' }).done;
    expect(dreamt.status).toBe(2);
    expect(dreamt.stderr).toMatch(/archon: .*(reach|connect|running)/i);
    const store = ArchonStore.open(dataDir);
    try {
      expect(store.dreams.undreamt(new Set(['completed']), 10)).toHaveLength(1);
    } finally {
      store.close();
    }
  });
});
