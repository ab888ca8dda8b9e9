import { realpathSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { approveAll, type ApprovalChannel } from '../../../src/core/approval/approval-channel';
import { planReply, requestText, stepIdOf, type RecordedRequest, type ScriptedReply } from '../../kit/scripted-model-server';
import { useEngine } from '../../support/engine';
import { useTempDirs } from '../../support/temp-dir';

const startEngine = useEngine();
const tempDir = useTempDirs();

const COUNT_RESULT = 'The warehouse holds 412 crates.';

/** `count` finds the number of crates; `after` (depending on it) answers as `after` says. */
function cratesScript(after: (request: RecordedRequest) => ScriptedReply = () => ({ content: 'Reported: 412 crates.' })): (request: RecordedRequest) => ScriptedReply {
  return (request) => {
    if (request.purpose === 'plan') return planReply([{ id: 'count', description: 'Count the crates in the warehouse' }, { id: 'after', description: 'Report the crates counted in the warehouse', dependencies: ['count'] }]);
    if (request.purpose === 'final') return { content: 'There are 412 crates.' };
    return stepIdOf(request) === 'count' ? { content: COUNT_RESULT } : after(request);
  };
}

const relevantMemory = (request: RecordedRequest) => /Relevant memory[^]*?\n\n/.exec(requestText(request))?.[0] ?? '';

describe("long-term memory keeps what a run's accepted outcome stands on", () => {
  it('a completed run in workspace A keeps its step facts there; a run in workspace B recalls none of them until one is made global', async () => {
    const engine = await startEngine({ reply: cratesScript() }, { memory: true });
    const learnt = await engine.run('Count the crates');
    expect(learnt.status).toBe('completed');
    const facts = engine.runtime.store.memory.list({ kind: 'fact', limit: 10 }).filter((item) => item.source?.runId === learnt.runId);
    expect(facts.map((item) => item.source?.stepId).sort()).toEqual(['after', 'count']);
    const count = facts.find((item) => item.source?.stepId === 'count');
    expect(count?.text).toBe(`Count the crates in the warehouse\nResult: ${COUNT_RESULT}`);
    expect([engine.workspace, realpathSync(engine.workspace)]).toContain(count?.workspace);
    expect(count?.global).toBe(false);

    const workspaceB = tempDir();
    const before = engine.server.chatRequests.length;
    expect((await engine.run('How many crates are in the warehouse?', { workspace: workspaceB })).status).toBe('completed');
    const inB = engine.server.chatRequests.slice(before);
    expect(inB.some((request) => request.purpose === 'plan')).toBe(true);
    for (const request of inB) expect(relevantMemory(request)).not.toContain('412 crates');

    engine.runtime.store.memory.setGlobal(count?.id ?? '', true);
    const afterGlobal = engine.server.chatRequests.length;
    expect((await engine.run('How many crates are in the warehouse?', { workspace: workspaceB })).status).toBe('completed');
    const plan = engine.server.chatRequests.slice(afterGlobal).find((request) => request.purpose === 'plan') as RecordedRequest;
    expect(relevantMemory(plan)).toContain(COUNT_RESULT);
    // A run in A recalls A's local items: the other step's fact, still local, reaches it.
    const inA = engine.server.chatRequests.length;
    expect((await engine.run('Report the crates counted in the warehouse')).status).toBe('completed');
    expect(relevantMemory(engine.server.chatRequests.slice(inA).find((request) => request.purpose === 'plan') as RecordedRequest)).toContain('Reported: 412 crates.');
  });

  it('a run whose step completed and a later step then failed for good keeps no fact (its episode says how it ended)', async () => {
    const loop = (): ScriptedReply => ({ toolCalls: [{ name: 'calculator', arguments: { expression: '1+1' } }] });
    const engine = await startEngine({ reply: cratesScript(loop) }, { memory: true });
    const result = await engine.run('Count the crates', { maxReplans: 0 });
    expect(result.status).toBe('failed');
    expect(engine.events).toContainEqual(expect.objectContaining({ type: 'step.completed', stepId: 'count' }));
    expect(engine.runtime.store.memory.list({ kind: 'fact', limit: 10 })).toEqual([]);
    expect(engine.runtime.store.memory.list({ kind: 'episode', limit: 10 }).map((item) => item.text.split('\n')[0])).toEqual([`Run ${result.runId} ended failed.`]);
  });

  it('a run whose final answer the operator rejected keeps no fact, though every step completed', async () => {
    const rejectAnswer: ApprovalChannel = {
      canRaiseBudgets: false,
      decide: async (request, options) => (request.kind === 'final_answer' ? { verdict: 'reject', feedback: 'Not this answer.' } : approveAll.decide(request, options)),
    };
    const engine = await startEngine({ reply: cratesScript() }, { memory: true, approvals: rejectAnswer });
    const result = await engine.run('Count the crates');
    expect(result.status).toBe('rejected');
    expect(engine.events.filter((event) => event.type === 'step.completed').map((event) => event.type === 'step.completed' && event.stepId).sort()).toEqual(['after', 'count']);
    expect(engine.runtime.store.memory.list({ kind: 'fact', limit: 10 })).toEqual([]);
  });
});

const RIVALS = [
  { id: 'a', description: 'Find the population of Lyon', expected_output: 'the population of Lyon', role: 'statistician' },
  { id: 'b', description: 'Find the population of Lyon', expected_output: 'the population of Lyon' },
];

/** Two steps answer the same question with different numbers; the critic passes each and says they disagree. */
function rivals(request: RecordedRequest): ScriptedReply {
  const text = requestText(request);
  if (request.purpose === 'plan') return planReply(RIVALS);
  if (request.purpose === 'critic') {
    const disagree = text.includes('answered the same question');
    return { toolCalls: [{ name: 'submit_verdict', arguments: { verdict: disagree ? 'fail' : 'pass', gap: disagree ? 0.5 : 0.02, reason: disagree ? '516,000 is not 513,000' : 'fine', confidence: 0.96 } }] };
  }
  if (request.purpose === 'final') return { content: 'Lyon has the population the chosen step found.' };
  return { content: text.includes('Step a:') ? 'Lyon has 516,000 people' : 'Lyon has 513,000 people' };
}

describe('a conflict settled in a completed run', () => {
  const factSteps = (engine: Awaited<ReturnType<typeof startEngine>>) => engine.runtime.store.memory.list({ kind: 'fact', limit: 10 }).map((item) => item.source?.stepId);

  it("keeps the vote's winner as a fact, not the outvoted result", async () => {
    const engine = await startEngine({ reply: rivals }, { memory: true });
    const result = await engine.run('population of Lyon', { verification: 'critic', roles: { statistician: { description: 'population statistics', tools: 'all' } } });
    expect(result.status).toBe('completed');
    expect(factSteps(engine)).toEqual(['a']);
  });

  it("keeps the operator's choice as a fact when the vote was escalated", async () => {
    const pickB: ApprovalChannel = {
      canRaiseBudgets: false,
      decide: async (request, options) => (request.kind === 'critical_decision' ? { verdict: 'edit', edited: { winner: 'b' } } : approveAll.decide(request, options)),
    };
    const engine = await startEngine({ reply: rivals }, { memory: true, approvals: pickB });
    const result = await engine.run('population of Lyon', { verification: 'critic' });
    expect(result.status).toBe('completed');
    expect(factSteps(engine)).toEqual(['b']);
  });
});
