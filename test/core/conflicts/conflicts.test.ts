import { describe, expect, it } from 'vitest';
import { approveAll, type ApprovalChannel } from '../../../src/core/approval/approval-channel';
import { domainMatch, factorsOf, rivalGroups, VOTE_THRESHOLD, weighVote } from '../../../src/core/conflicts/conflicts';
import { RoleRegistry } from '../../../src/core/roles/role-registry';
import { conflictAnswerWinner, parseSettledConflict } from '../../../src/shared/schemas/bus';
import type { RunEvent } from '../../../src/shared/schemas/events';
import { planReply, requestText, type RecordedRequest, type ScriptedReply } from '../../kit/scripted-model-server';
import { useEngine } from '../../support/engine';

const startEngine = useEngine();

describe('the weighted conflict vote', () => {
  it('weighs domain 0.4, confidence 0.3, history 0.3: a matching specialist beats a surer generalist', () => {
    const vote = weighVote([
      { stepId: 'sure', agent: 'executor:sure', factors: { domain: 0, confidence: 1, history: 0.9 } },
      { stepId: 'expert', agent: 'statistician:expert', factors: { domain: 1, confidence: 0.6, history: 0.5 } },
    ]);
    expect(vote.ballots.map((ballot) => ballot.score)).toEqual([expect.closeTo(0.57), expect.closeTo(0.73)]);
    expect(vote.winner.stepId).toBe('expert');
    expect(vote.escalate).toBe(false);
  });

  it(`escalates a winner under ${VOTE_THRESHOLD}, and the earlier step wins a tie`, () => {
    const factors = { domain: 0, confidence: 0.9, history: 1 };
    const vote = weighVote([
      { stepId: 'a', agent: 'executor:a', factors },
      { stepId: 'b', agent: 'executor:b', factors },
    ]);
    expect(vote.winner).toMatchObject({ stepId: 'a', score: expect.closeTo(0.57) });
    expect(vote.escalate).toBe(true);
  });

  it("counts a role-less step's history as the role it ran as (a sub-agent's step default), not as executor", () => {
    const roles = { researcher: { description: 'finds facts', tools: 'all' as const } };
    const plan = { goal: 'g', steps: [{ id: 'a', description: 'x', dependencies: [] }, { id: 'b', description: 'y', dependencies: [], role: 'researcher' }, { id: 'c', description: 'z', dependencies: [], role: 'executor' }] };
    const verdict = (stepId: string, verdict: 'pass' | 'fail') => ({ type: 'validation.completed', runId: 'r', seq: 1, ts: 'now', stepId, verdict, confidence: 0.5, reasons: [] }) as unknown as RunEvent;
    const events = [verdict('b', 'pass'), verdict('c', 'fail')];
    // In a sub-agent whose parent step is the researcher's, step a runs as the researcher: its history is b's pass.
    expect(factorsOf(plan.steps[0] as (typeof plan.steps)[0], plan, { registry: new RoleRegistry(roles, 'researcher'), configured: roles }, events).history).toBe(1);
    expect(factorsOf(plan.steps[0] as (typeof plan.steps)[0], plan, { registry: new RoleRegistry(roles), configured: roles }, events).history).toBe(0);
  });

  it('measures the domain as the overlap of the question and the role; only completed, independent steps with the same expected output are rivals', () => {
    const roles = { statistician: { description: 'population statistics', tools: 'all' as const } };
    expect(domainMatch({ id: 'a', description: 'Find the population of Lyon', dependencies: [], role: 'statistician' }, roles)).toBeCloseTo(1 / 3);
    expect(domainMatch({ id: 'a', description: 'Find the population of Lyon', dependencies: [] }, roles)).toBe(0);
    const plan = {
      goal: 'g',
      steps: [
        { id: 'a', description: 'x', expected_output: 'The population ', dependencies: [] },
        { id: 'b', description: 'y', expected_output: 'the  population', dependencies: [] },
        { id: 'c', description: 'z', expected_output: 'the population', dependencies: ['a'] },
        { id: 'd', description: 'w', expected_output: 'the population', dependencies: [] },
      ],
    };
    const states = new Map([
      ['a', { status: 'completed' as const, result: '1' }],
      ['b', { status: 'completed' as const, result: '2' }],
      ['c', { status: 'completed' as const, result: '3' }],
      ['d', { status: 'failed' as const, result: null }],
    ]);
    expect(rivalGroups(plan, states).map((group) => group.map((step) => step.id))).toEqual([['a', 'b']]);
  });
});

const RIVALS = [
  { id: 'a', description: 'Find the population of Lyon', expected_output: 'the population of Lyon', role: 'statistician' },
  { id: 'b', description: 'Find the population of Lyon', expected_output: 'the population of Lyon' },
];

/** Steps answer with different numbers; the critic passes each result (confidence 0.96) and says the two disagree. */
function reply(request: RecordedRequest): ScriptedReply {
  const text = requestText(request);
  if (request.purpose === 'plan') return planReply(RIVALS);
  if (request.purpose === 'critic') {
    const disagree = text.includes('answered the same question');
    return { toolCalls: [{ name: 'submit_verdict', arguments: { verdict: disagree ? 'fail' : 'pass', gap: disagree ? 0.5 : 0.02, reason: disagree ? '516,000 is not 513,000' : 'fine', confidence: 0.96 } }] };
  }
  if (request.purpose === 'final') return { content: text.includes('superseded') ? `final: ${text.includes('513,000 people') ? 'b' : 'a'} stands` : 'final: no conflict seen' };
  return { content: text.includes('Step a:') ? 'Lyon has 516,000 people' : 'Lyon has 513,000 people' };
}

function busOf(events: RunEvent[]) {
  return events.flatMap((event) => (event.type === 'bus.message' ? [event] : []));
}

describe('conflicts in a run (scripted server, real openai client)', () => {
  it('the matching specialist wins the vote at or above the threshold: no one is asked, the decision is broadcast', async () => {
    const engine = await startEngine({ reply });
    const result = await engine.run('population of Lyon', { verification: 'critic', roles: { statistician: { description: 'population statistics', tools: 'all' } } });
    expect(result).toMatchObject({ status: 'completed', answer: 'final: a stands' });
    expect(engine.events.filter((event) => event.type === 'approval.requested').map((event) => event.type === 'approval.requested' && event.kind)).toEqual(['plan', 'final_answer']);
    const decision = busOf(engine.events).find((event) => event.kind === 'decision');
    expect(decision).toMatchObject({ from: 'coordinator', topic: 'broadcast' });
    expect(parseSettledConflict(decision?.body ?? '')).toMatchObject({ winner: 'a', vote: { winner: { stepId: 'a', score: expect.closeTo(0.4 / 3 + 0.3 * 0.96 + 0.3) }, escalate: false } });
    expect(busOf(engine.events).some((event) => event.kind === 'critique' && event.body.includes('disagree'))).toBe(true);
  });

  it('two generalists under the threshold: the operator decides (a critical decision) and the answer chosen reaches the final answer', async () => {
    const pickB: ApprovalChannel = {
      canRaiseBudgets: false,
      decide: async (request, options) => (request.kind === 'critical_decision' ? { verdict: 'edit', edited: { winner: 'b' } } : approveAll.decide(request, options)),
    };
    const engine = await startEngine({ reply }, { approvals: pickB });
    const result = await engine.run('population of Lyon', { verification: 'critic' });
    expect(result).toMatchObject({ status: 'completed', answer: 'final: b stands' });
    const asked = engine.events.find((event) => event.type === 'approval.requested' && event.kind === 'critical_decision');
    expect(asked).toMatchObject({ action: { winner: 'a', ballots: [{ stepId: 'a', score: expect.closeTo(0.588) }, { stepId: 'b', score: expect.closeTo(0.588) }] } });
    const bus = busOf(engine.events);
    const escalation = bus.find((event) => event.kind === 'escalation');
    expect(escalation).toMatchObject({ from: 'coordinator', to: 'operator' });
    expect(parseSettledConflict(escalation?.body ?? '')).toMatchObject({ question: expect.any(String), vote: { winner: { stepId: 'a' }, escalate: true } });
    const answer = bus.find((event) => event.kind === 'decision');
    expect(answer).toMatchObject({ from: 'operator', correlationId: escalation?.id, body: 'winner: b' });
    expect(conflictAnswerWinner(answer?.body ?? '')).toBe('b');
  });

  it('without critic verification no critic is asked and nothing is voted on', async () => {
    const engine = await startEngine({ reply });
    const result = await engine.run('population of Lyon');
    expect(result).toMatchObject({ status: 'completed', answer: 'final: no conflict seen' });
    expect(engine.server.chatRequests.filter((request) => request.purpose === 'critic')).toEqual([]);
  });
});
