import { describe, expect, it } from 'vitest';
import { approveAll, type ApprovalChannel } from '../../../src/core/approval/approval-channel';
import { ArchonError } from '../../../src/shared/errors';
import type { RunEvent } from '../../../src/shared/schemas/events';
import { planReply, requestText, stepIdOf, toolMessagesOf, type PlanStepScript, type RecordedRequest, type ScriptedReply } from '../../kit/scripted-model-server';
import { useEngine } from '../../support/engine';

const startEngine = useEngine();

const PARENT_GOAL = 'Write a short report on the capital of France';
const SUB_GOAL = 'Find the capital of France';
const CHILD_ANSWER = 'The capital of France is Paris (sub-agent).';

/** The goal a plan or final request is about: the last "Goal: …" line of its brief. */
function goalOf(request: RecordedRequest): string {
  const goals = [...requestText(request).matchAll(/^Goal: (.+)$/gm)].map((match) => match[1] ?? '');
  return goals.at(-1) ?? '';
}

interface Script {
  /** Plans per goal, in the order they are asked for. */
  plans: Record<string, ((attempt: number) => ScriptedReply) | PlanStepScript[]>;
  step?: (request: RecordedRequest, id: string) => ScriptedReply;
  final?: (request: RecordedRequest, goal: string) => ScriptedReply;
}

/** Routes each request by purpose and by the goal it is about, so a parent and its children share one server. */
function script({ plans, step, final }: Script) {
  const attempts = new Map<string, number>();
  return (request: RecordedRequest): ScriptedReply => {
    const goal = goalOf(request);
    if (request.purpose === 'plan' || request.purpose === 'replan') {
      const attempt = attempts.get(goal) ?? 0;
      attempts.set(goal, attempt + 1);
      const plan = plans[goal];
      if (!plan) return planReply([{ id: `fallback${attempt}`, description: 'do it directly' }]);
      return typeof plan === 'function' ? plan(attempt) : planReply(plan);
    }
    if (request.purpose === 'final') return final?.(request, goal) ?? { content: goal === SUB_GOAL ? CHILD_ANSWER : `final answer for ${goal}` };
    const id = stepIdOf(request) ?? '?';
    return step?.(request, id) ?? { content: `result of ${id}` };
  };
}

const parentPlan: PlanStepScript[] = [
  { id: 'research', kind: 'subagent', goal: SUB_GOAL },
  { id: 'report', description: 'Write the report from the research', dependencies: ['research'] },
];

const childPlan: PlanStepScript[] = [{ id: 'lookup', description: 'Look up the capital of France' }];

function eventsOf(events: RunEvent[], runId: string): RunEvent[] {
  return events.filter((event) => event.runId === runId);
}

/** Records every approval asked, approving all, into a shared log with the server's requests. */
function recordingApprovals(log: string[]): ApprovalChannel {
  return {
    canRaiseBudgets: false,
    decide: async (request, options) => {
      log.push(`approval:${request.kind}`);
      return approveAll.decide(request, options);
    },
  };
}

describe('sub-agent steps (child runs with their own plan, budget and approvals)', () => {
  it('runs a subagent step as a child run that plans its own goal; its answer reaches the parent\'s next step', async () => {
    const engine = await startEngine({ reply: script({ plans: { [PARENT_GOAL]: parentPlan, [SUB_GOAL]: childPlan } }) });
    const result = await engine.run(PARENT_GOAL);
    expect(result.status).toBe('completed');

    const runs = engine.runtime.store.runs.listRuns(10);
    const child = runs.find((run) => run.parentRunId === result.runId);
    expect(child).toMatchObject({ goal: SUB_GOAL, status: 'completed', answer: CHILD_ANSWER });
    expect(runs.find((run) => run.id === result.runId)?.parentRunId).toBeUndefined();
    const childId = child?.id as string;
    expect(engine.runtime.store.runs.getRun(childId)?.options).toMatchObject({ parentRunId: result.runId, parentStepId: 'research', depth: 1 });

    const plans = engine.server.chatRequests.filter((request) => request.purpose === 'plan');
    expect(plans.map(goalOf)).toEqual([PARENT_GOAL, SUB_GOAL]);
    expect(plans[0]?.body.messages?.[0]?.content).toContain('"kind": "subagent"');
    const report = engine.server.chatRequests.find((request) => stepIdOf(request) === 'report') as RecordedRequest;
    expect(requestText(report)).toContain(`- research: ${CHILD_ANSWER}`);

    const parentEvents = eventsOf(engine.events, result.runId);
    expect(parentEvents.find((event) => event.type === 'subagent.started')).toMatchObject({ stepId: 'research', childRunId: childId, goal: SUB_GOAL, role: null, depth: 1 });
    expect(parentEvents.find((event) => event.type === 'step.completed' && event.stepId === 'research')).toMatchObject({ result: CHILD_ANSWER });
    expect(eventsOf(engine.events, childId)[0]).toMatchObject({ type: 'run.started', goal: SUB_GOAL, parentRunId: result.runId, parentStepId: 'research' });
    expect(eventsOf(engine.events, childId).some((event) => event.type === 'validation.completed')).toBe(true);
    expect(parentEvents.some((event) => event.type === 'validation.completed' && event.stepId === 'research')).toBe(true);

    const handOffs = parentEvents.flatMap((event) => (event.type === 'bus.message' && [event.from, event.to].includes(`subagent:${childId}`) ? [event] : []));
    expect(handOffs.map(({ from, to, kind, body }) => ({ from, to, kind, body }))).toEqual([
      { from: 'coordinator', to: `subagent:${childId}`, kind: 'task', body: SUB_GOAL },
      { from: `subagent:${childId}`, to: 'coordinator', kind: 'result', body: CHILD_ANSWER },
    ]);
    expect(handOffs[1]?.correlationId).toBe(handOffs[0]?.id);
  });

  it("gives the child the parent's memory: it recalls through the same embedder, its plan request carries Relevant memory, its episode is kept", async () => {
    const engine = await startEngine({ reply: script({ plans: { [PARENT_GOAL]: parentPlan, [SUB_GOAL]: childPlan } }) }, { memory: true });
    const fact = engine.runtime.store.memory.add({ kind: 'fact', text: 'The capital of France is Paris, on the Seine.' });
    const result = await engine.run(PARENT_GOAL, { embeddingModel: 'scripted-embedding' });
    expect(result.status).toBe('completed');
    const childId = engine.runtime.store.runs.listRuns(10).find((run) => run.parentRunId === result.runId)?.id as string;
    const embedded = engine.server.requests.filter((request) => request.path === '/v1/embeddings').flatMap((request) => [request.body.input ?? []].flat());
    expect(embedded).toContain(SUB_GOAL);
    const childPlanRequest = engine.server.chatRequests.find((request) => request.purpose === 'plan' && goalOf(request) === SUB_GOAL) as RecordedRequest;
    expect(requestText(childPlanRequest)).toContain(`Relevant memory`);
    expect(requestText(childPlanRequest)).toContain(fact.text);
    const episodes = engine.runtime.store.memory.list({ kind: 'episode', limit: 10 }).map((item) => item.text.split('\n')[0]);
    expect(episodes).toEqual(expect.arrayContaining([`Run ${childId} ended completed.`, `Run ${result.runId} ended completed.`]));
  });

  it("counts the child's spending against the parent's cap: a cap the child alone exceeds stops both as budget_exhausted", async () => {
    const small = { usage: { prompt_tokens: 50, completion_tokens: 10 } };
    const engine = await startEngine({
      reply: script({
        plans: { [PARENT_GOAL]: () => ({ ...planReply(parentPlan), ...small }), [SUB_GOAL]: () => ({ ...planReply([{ id: 'lookup', description: 'Look it up' }, { id: 'check', description: 'Check it', dependencies: ['lookup'] }]), ...small }) },
        step: (_request, id) => (id === 'lookup' ? { content: 'Paris', usage: { prompt_tokens: 20_000, completion_tokens: 10 } } : { content: `result of ${id}`, ...small }),
      }),
    });
    const result = await engine.run(PARENT_GOAL, { maxTokens: 20_000 });
    expect(result.status).toBe('budget_exhausted');
    const child = engine.runtime.store.runs.listRuns(10).find((run) => run.parentRunId === result.runId);
    expect(child?.status).toBe('budget_exhausted');
    expect(engine.runtime.store.runs.getRun(child?.id as string)?.options.maxTokens).toBeLessThan(20_000);
    expect(engine.server.chatRequests.some((request) => stepIdOf(request) === 'check' || stepIdOf(request) === 'report')).toBe(false);
    expect(engine.runtime.store.runs.spending(result.runId, new Date(0).toISOString()).tokens).toBeGreaterThan(20_000);
  });

  it("stopping the parent stops its child: both end stopped, the child's hanging request aborted", async () => {
    const controller = new AbortController();
    const engine = await startEngine({
      reply: script({
        plans: { [PARENT_GOAL]: parentPlan, [SUB_GOAL]: childPlan },
        step: (_request, id) => {
          if (id !== 'lookup') return { content: `result of ${id}` };
          controller.abort(new ArchonError('CANCELLED', 'Stopped by the operator (archon stop).'));
          return { hang: true };
        },
      }),
    });
    const result = await engine.run(PARENT_GOAL, {}, controller.signal);
    expect(result.status).toBe('stopped');
    const child = engine.runtime.store.runs.listRuns(10).find((run) => run.parentRunId === result.runId);
    expect(child?.status).toBe('stopped');
    expect(eventsOf(engine.events, child?.id as string).at(-1)).toMatchObject({ type: 'run.stopped', reason: 'Stopped by the operator (archon stop).' });
    expect(engine.server.chatRequests.some((request) => stepIdOf(request) === 'report' || request.purpose === 'final')).toBe(false);
  });

  it("under balanced asks no final_answer of the child: its answer is a step result, reviewed in the parent; only the parent's answer is approved", async () => {
    const engine = await startEngine({ reply: script({ plans: { [PARENT_GOAL]: parentPlan, [SUB_GOAL]: childPlan } }) });
    const result = await engine.run(PARENT_GOAL, { policy: 'balanced' });
    expect(result.status).toBe('completed');
    const childId = engine.runtime.store.runs.listRuns(10).find((run) => run.parentRunId === result.runId)?.id as string;
    const finalAsks = engine.events.filter((event) => event.type === 'approval.requested' && event.kind === 'final_answer').map((event) => event.runId);
    expect(finalAsks).toEqual([result.runId]);
    expect(eventsOf(engine.events, childId).find((event) => event.type === 'run.completed')).toMatchObject({ answer: CHILD_ANSWER });
    expect(eventsOf(engine.events, result.runId).some((event) => event.type === 'validation.completed' && event.stepId === 'research')).toBe(true);
  });

  it('under strict asks subagent_spawn first (goal, role, depth, budget), before the child asks for its plan', async () => {
    const log: string[] = [];
    const handler = script({ plans: { [PARENT_GOAL]: parentPlan, [SUB_GOAL]: childPlan } });
    const approvals = recordingApprovals(log);
    const asked: unknown[] = [];
    const engine = await startEngine(
      {
        reply: (request) => {
          log.push(`request:${request.purpose}:${goalOf(request)}`);
          return handler(request);
        },
      },
      { approvals: { ...approvals, decide: (request, options) => (asked.push(request), approvals.decide(request, options)) } },
    );
    const result = await engine.run(PARENT_GOAL, { policy: 'strict', maxTokens: 500_000 });
    expect(result.status).toBe('completed');
    const spawn = log.indexOf('approval:subagent_spawn');
    expect(spawn).toBeGreaterThan(log.indexOf(`request:plan:${PARENT_GOAL}`));
    expect(spawn).toBeLessThan(log.indexOf(`request:plan:${SUB_GOAL}`));
    expect(asked.find((request) => (request as { kind: string }).kind === 'subagent_spawn')).toMatchObject({
      stepId: 'research',
      action: { goal: SUB_GOAL, role: null, depth: 1, budget: { maxTokens: expect.any(Number) as number } },
    });
    const childId = engine.runtime.store.runs.listRuns(10).find((run) => run.parentRunId === result.runId)?.id as string;
    expect(eventsOf(engine.events, childId).filter((event) => event.type === 'approval.requested').map((event) => event.type === 'approval.requested' && event.kind)).toContain('plan');
  });

  it('refuses a sub-agent step deeper than depth 2 as a plan error, and a child whose goal revisits an ancestor\'s', async () => {
    const GRANDCHILD_GOAL = 'Find the name of the capital';
    const engine = await startEngine({
      reply: script({
        plans: {
          [PARENT_GOAL]: parentPlan,
          [SUB_GOAL]: [{ id: 'deeper', kind: 'subagent', goal: GRANDCHILD_GOAL }],
          [GRANDCHILD_GOAL]: (attempt) => planReply(attempt === 0 ? [{ id: 'too-deep', kind: 'subagent', goal: 'Spell the name' }] : [{ id: 'name', description: 'Name it' }]),
        },
      }),
    });
    const result = await engine.run(PARENT_GOAL);
    expect(result.status).toBe('completed');
    const runs = engine.runtime.store.runs.listRuns(10);
    expect(runs).toHaveLength(3);
    const grandchild = runs.find((run) => run.goal === GRANDCHILD_GOAL);
    expect(engine.runtime.store.runs.getRun(grandchild?.id as string)?.options.depth).toBe(2);
    const grandchildPlans = engine.server.chatRequests.filter((request) => request.purpose === 'plan' && goalOf(request) === GRANDCHILD_GOAL);
    expect(grandchildPlans).toHaveLength(2);
    expect(grandchildPlans[0]?.body.messages?.[0]?.content).not.toContain('"kind": "subagent"');
    expect(toolMessagesOf(grandchildPlans[1] as RecordedRequest).join(' ')).toMatch(/"too-deep" is a sub-agent step, but this run is a sub-agent at depth 2, the deepest allowed \(2\)/);

    const revisit = await startEngine({ reply: script({ plans: { [PARENT_GOAL]: [{ id: 'again', kind: 'subagent', goal: `${PARENT_GOAL.toUpperCase()}.` }] } }) });
    const refused = await revisit.run(PARENT_GOAL, { maxReplans: 0 });
    expect(revisit.events.find((event) => event.type === 'step.failed' && event.stepId === 'again')).toMatchObject({ reason: expect.stringMatching(/^subagent_refused: .*goal of this run or a run above it/) as string });
    expect(revisit.runtime.store.runs.listRuns(10).filter((run) => run.parentRunId === refused.runId)).toEqual([]);
  });
});
