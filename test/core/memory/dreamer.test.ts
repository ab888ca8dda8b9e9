import { describe, expect, it } from 'vitest';
import { approveAll } from '../../../src/core/approval/approval-channel';
import { dreamRun } from '../../../src/core/memory/dream-run';
import { dream, dreamInputs, supportedLessons, type DreamOutcome } from '../../../src/core/memory/dreamer';
import { modelConnector } from '../../../src/core/model/connect';
import { EmergencyStop } from '../../../src/core/stop/emergency-stop';
import { fenceNonce, spotlightRule } from '../../../src/core/provenance/spotlight';
import { DEFAULT_SETTINGS } from '../../../src/shared/schemas/settings';
import type { RunOptions } from '../../../src/shared/schemas/run';
import { planReply, requestText, type RecordedRequest, type ScriptedReply } from '../../kit/scripted-model-server';
import { useEngine, type EngineHarness } from '../../support/engine';

const startEngine = useEngine();

const CRITIC_REASON = 'The sum is missing: the step asks for the total of the three invoices.';
const UNKNOWN_RUN = '00000000-0000-4000-8000-000000000000';

function verdict(answer: { verdict: 'pass' | 'fail'; gap: number; reason: string }): ScriptedReply {
  return { toolCalls: [{ name: 'submit_verdict', arguments: { ...answer, confidence: 0.9 } }] };
}

/** A run whose step the critic fails once (its reason verbatim) and passes after the repair; `lessons` requests go to `lessons`. */
function script(lessons: (request: RecordedRequest, index: number) => ScriptedReply) {
  let steps = 0;
  let critics = 0;
  let lessonRequests = 0;
  return (request: RecordedRequest): ScriptedReply => {
    const text = requestText(request);
    if (request.purpose === 'lessons') return lessons(request, lessonRequests++);
    if (request.purpose === 'plan') return planReply([{ id: 'sum', description: 'add up the three invoices' }]);
    if (request.purpose === 'final') return { content: 'The total is 60.' };
    if (request.purpose === 'critic' && text.includes('Criteria: The plan covers the goal')) return verdict({ verdict: 'pass', gap: 0, reason: 'Covers it.' });
    if (request.purpose === 'critic' && text.includes('Criteria: The goal is reached')) return verdict({ verdict: 'fail', gap: 0.5, reason: 'Half done.' });
    if (request.purpose === 'critic') return critics++ === 0 ? verdict({ verdict: 'fail', gap: 0.6, reason: CRITIC_REASON }) : verdict({ verdict: 'pass', gap: 0, reason: 'Correct.' });
    return { content: steps++ === 0 ? 'The invoices are 10, 20 and 30.' : 'The total is 60.' };
  };
}

function runIdIn(request: RecordedRequest): string {
  return /^Run (\S+) \(/m.exec(requestText(request))?.[1] ?? 'none';
}

const connect = modelConnector({ retry: { windowMs: 150, baseDelayMs: 10, maxDelayMs: 50, firstByteTimeoutMs: 10_000, idleTimeoutMs: 10_000 } });

function dreamOptions(engine: EngineHarness): RunOptions {
  return { modelUrl: engine.server.url, model: '', policy: 'balanced', concurrency: null, maxTokens: null, maxCostUsd: null, workspace: engine.workspace, maxIterations: 10, verification: 'checks', repairBudget: 2, maxReplans: 3 };
}

/** A dream as `archon dream` makes it: a run of kind `dream`. */
async function dreamer(engine: EngineHarness): Promise<DreamOutcome> {
  const { runtime } = engine;
  const estop = new EmergencyStop(runtime.store, runtime.bus, runtime.now);
  return (await dreamRun({ runtime, estop, approvals: approveAll, connect, options: dreamOptions(engine), settings: DEFAULT_SETTINGS }, new AbortController().signal)).outcome;
}

/** The Dreamer alone against a text-mode model (the probe is not what this is about). */
async function textDreamer(engine: EngineHarness): Promise<DreamOutcome> {
  const { model } = await connect(dreamOptions(engine), new AbortController().signal);
  const { store } = engine.runtime;
  return dream({ dreams: store.dreams, memory: store.memory, chat: (request) => model.chat(request, { signal: new AbortController().signal }), mode: 'text', nonce: fenceNonce({ runId: 'a text dream' }) }, dreamInputs(store.runs, store.dreams));
}

const lessonsRequests = (engine: EngineHarness) => engine.server.chatRequests.filter((request) => request.purpose === 'lessons');

describe('the Dreamer (real openai client, scripted server, real SQLite)', () => {
  it("reads a repaired run's records with the verdict verbatim, stores the lesson its evidence supports, drops one naming a run it was not shown, and never dreams the run twice", async () => {
    const engine = await startEngine({
      reply: script((request) => ({
        toolCalls: [
          {
            name: 'submit_lessons',
            arguments: {
              lessons: [
                { text: 'When totalling invoices, give the total itself, not only the amounts.', evidence: [runIdIn(request)], applies_to: 'totalling invoices' },
                { text: 'An invented cause.', evidence: [runIdIn(request), UNKNOWN_RUN], applies_to: 'anything' },
              ],
            },
          },
        ],
      })),
    });
    const run = await engine.run('total the invoices', { verification: 'critic' });
    expect(run.status).toBe('completed');
    const outcome = await dreamer(engine);
    expect(outcome.runIds).toEqual([run.runId]);
    expect(outcome.dropped.map((lesson) => lesson.text)).toEqual(['An invented cause.']);
    const [asked] = lessonsRequests(engine);
    expect(asked?.body.tools?.map((tool) => tool.function.name)).toEqual(['submit_lessons']);
    const records = requestText(asked as RecordedRequest);
    expect(records).toContain(`Verdict on sum: fail: ${CRITIC_REASON}`);
    expect(records).toContain(`Repair 1 of sum: ${CRITIC_REASON}`);
    expect(records).toContain('Goal: total the invoices');
    // The records hold what the steps read and wrote: fenced as data, the fence explained.
    const nonce = new RegExp(`⟦data ([0-9a-f]{12}) from the records of run ${run.runId}⟧\\nRun ${run.runId} \\(completed\\)`).exec(records)?.[1] ?? 'no fence';
    expect(records.trimEnd().endsWith(`⟦/data ${nonce}⟧`)).toBe(true);
    expect(asked?.body.messages?.find((entry) => entry.role === 'system')?.content).toContain(spotlightRule(nonce));
    const lessons = engine.runtime.store.memory.list({ kind: 'lesson', limit: 10 });
    expect(lessons).toMatchObject([{ kind: 'lesson', text: 'When totalling invoices, give the total itself, not only the amounts.', evidence: [run.runId], appliesTo: 'totalling invoices', source: { runId: run.runId, stepId: null } }]);
    expect(outcome.stored.map((item) => item.id)).toEqual(lessons.map((item) => item.id));

    const again = await dreamer(engine);
    expect(again).toEqual({ runIds: [], stored: [], dropped: [], unreadable: null });
    expect(lessonsRequests(engine)).toHaveLength(1);
  });

  it('reads lessons a text-mode model writes after "Lessons:", leniently', async () => {
    const engine = await startEngine({
      reply: script((request) => ({ content: `Thinking done.\nLessons: {"lessons": [{"text": "Say the total.", "evidence": ["${runIdIn(request)}"], "applies_to": "sums",},],}` })),
    });
    const run = await engine.run('total the invoices', { verification: 'critic' });
    const outcome = await textDreamer(engine);
    expect(lessonsRequests(engine)[0]?.body.tools).toBeUndefined();
    expect(outcome.stored).toMatchObject([{ text: 'Say the total.', evidence: [run.runId] }]);
  });

  it('an answer it cannot read is fed back once; a second stores nothing and leaves the run to dream again', async () => {
    const engine = await startEngine({ reply: script(() => ({ content: 'I learned a lot.' })) });
    const run = await engine.run('total the invoices', { verification: 'critic' });
    const outcome = await dreamer(engine);
    expect(outcome.stored).toEqual([]);
    expect(outcome.unreadable).toMatch(/No lessons were found/);
    const [, second] = lessonsRequests(engine);
    expect(requestText(second as RecordedRequest)).toContain('Submit the lessons again.');
    expect(engine.runtime.store.dreams.undreamt(new Set(['completed']), 10)).toEqual([run.runId]);
    expect(engine.runtime.store.memory.list({ kind: 'lesson', limit: 10 })).toEqual([]);
  });

  it('a run started without memory is not dreamt, and nothing asks the model', async () => {
    const engine = await startEngine({ reply: script(() => ({ content: 'unused' })) });
    await engine.run('total the invoices', { verification: 'critic', memory: false });
    expect(await dreamer(engine)).toEqual({ runIds: [], stored: [], dropped: [], unreadable: null });
    expect(lessonsRequests(engine)).toHaveLength(0);
  });
});

describe('supportedLessons (MM-12)', () => {
  it('keeps a lesson only when every run it names was shown', () => {
    const shown = new Set(['a', 'b']);
    const { kept, dropped } = supportedLessons(
      [
        { text: 'x', evidence: ['a', 'b'], applies_to: '' },
        { text: 'y', evidence: ['a', 'c'], applies_to: '' },
      ],
      shown,
    );
    expect(kept.map((lesson) => [lesson.text, lesson.firstRun])).toEqual([['x', 'a']]);
    expect(dropped.map((lesson) => lesson.text)).toEqual(['y']);
  });
});
