import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { denyAll, type ApprovalChannel } from '../../../src/core/approval/approval-channel';
import { PendingApprovals } from '../../../src/core/approval/pending-approvals';
import { defineTool, ToolRegistry, toolResult } from '../../../src/core/tools/tool-registry';
import { EscalationActionSchema, PlanRevisionActionSchema, type ApprovalDecision, type ApprovalRequest } from '../../../src/shared/schemas/approval';
import { inAppTerms } from '../../../src/shared/app-advice';
import type { RunEvent } from '../../../src/shared/schemas/events';
import { planReply, replanFailureReason, requestText, stepIdOf, type RecordedRequest, type ScriptedReply } from '../../kit/scripted-model-server';
import { useEngine, type EngineHarness } from '../../support/engine';

const startEngine = useEngine();

const FETCH_ERROR = 'HTTP 503 from primary.example: the service is gone for good';

/** The source every first plan reads: it fails every time. */
const fetchData = defineTool({
  name: 'fetch_data',
  description: 'reads the primary data source',
  input: z.object({ source: z.string() }),
  sideEffects: 'none',
  idempotent: true,
  timeoutMs: 5000,
  run: async () => toolResult('error', FETCH_ERROR),
});

/** Routes requests by purpose; steps by id, each with how many requests it has had. */
function script(handlers: {
  plan: () => ScriptedReply;
  replan?: (request: RecordedRequest, index: number) => ScriptedReply;
  critic?: (request: RecordedRequest, index: number) => ScriptedReply;
  step: (id: string, turn: number, request: RecordedRequest) => ScriptedReply;
}) {
  const turns = new Map<string, number>();
  let replans = 0;
  let critics = 0;
  return (request: RecordedRequest): ScriptedReply => {
    if (request.purpose === 'plan') return handlers.plan();
    if (request.purpose === 'replan') return handlers.replan?.(request, replans++) ?? { content: 'no plan' };
    if (request.purpose === 'critic' && requestText(request).includes('Criteria: The plan covers the goal')) return { toolCalls: [{ name: 'submit_verdict', arguments: { verdict: 'pass', gap: 0, reason: 'The plan covers the goal.' } }] };
    if (request.purpose === 'critic') return handlers.critic?.(request, critics++) ?? { content: 'no verdict' };
    if (request.purpose === 'final') return { content: 'final answer' };
    const id = stepIdOf(request) ?? '?';
    const turn = turns.get(id) ?? 0;
    turns.set(id, turn + 1);
    return handlers.step(id, turn, request);
  };
}

const loopOn = (source: string): ScriptedReply => ({ toolCalls: [{ name: 'fetch_data', arguments: { source } }] });

function stepRequests(engine: EngineHarness, id: string): RecordedRequest[] {
  return engine.server.chatRequests.filter((request) => request.purpose === 'step' && stepIdOf(request) === id);
}

function eventsOf<T extends RunEvent['type']>(events: RunEvent[], type: T): Extract<RunEvent, { type: T }>[] {
  return events.filter((event): event is Extract<RunEvent, { type: T }> => event.type === type);
}

describe('scoped re-plan (RP-01)', () => {
  it('a step whose tool fails for good is re-planned with its reason verbatim while the independent branch runs on; the replacement runs and the run completes', async () => {
    let replanSeen: () => void = () => undefined;
    const replanned = new Promise<void>((resolve) => (replanSeen = resolve));
    // The independent branch cannot finish before the re-plan request arrives: it provably ran through it.
    const awaitReplan = defineTool({ name: 'watch', description: 'watches the slow source', input: z.object({}), sideEffects: 'none', idempotent: true, timeoutMs: 30_000, run: async () => (await replanned, toolResult('success', 'slow source settled')) });
    const engine = await startEngine(
      {
        reply: script({
          plan: () =>
            planReply([
              { id: 'slow', description: 'Watch the slow source until it settles', expected_output: 'its state' },
              { id: 'fetch', description: 'Fetch the data from the primary source', expected_output: 'the data' },
              { id: 'report', description: 'Summarize the data', dependencies: ['fetch'], expected_output: 'a summary' },
            ]),
          replan: () => {
            replanSeen();
            return planReply([
              { id: 'fetch_mirror', description: 'Fetch the data from the mirror instead', expected_output: 'the data' },
              { id: 'report', description: 'Summarize the mirrored data', dependencies: ['fetch_mirror'], expected_output: 'a summary' },
            ]);
          },
          step: (id, turn) => {
            if (id === 'slow') return turn === 0 ? { toolCalls: [{ name: 'watch', arguments: {} }] } : { content: 'slow source settled at 7' };
            if (id === 'fetch') return loopOn('primary');
            return { content: `result of ${id}` };
          },
        }),
      },
      { tools: () => new ToolRegistry([fetchData, awaitReplan]) },
    );
    const result = await engine.run('Report on the data', { concurrency: 4 });
    expect(result.status).toBe('completed');

    const failure = eventsOf(engine.events, 'step.failed').find((event) => event.stepId === 'fetch');
    expect(failure?.reason).toMatch(/^loop_detected: fetch_data/);
    const replans = engine.server.chatRequests.filter((request) => request.purpose === 'replan');
    expect(replans).toHaveLength(1);
    expect(replanFailureReason(replans[0] as RecordedRequest)).toBe(failure?.reason);
    expect(requestText(replans[0] as RecordedRequest)).toContain('Fetch the data from the primary source');
    expect(replans[0]?.body.tools?.map((tool) => tool.function.name)).toEqual(['submit_plan']);

    // The independent branch: started once, asked twice, never restarted.
    expect(stepRequests(engine, 'slow')).toHaveLength(2);
    expect(eventsOf(engine.events, 'step.started').filter((event) => event.stepId === 'slow')).toHaveLength(1);
    expect(stepRequests(engine, 'fetch')).toHaveLength(3);
    expect(stepRequests(engine, 'report')).toHaveLength(0);
    expect(stepRequests(engine, 'fetch_mirror')).toHaveLength(1);
    expect(stepRequests(engine, 'report.r1')).toHaveLength(1);

    const revised = eventsOf(engine.events, 'plan.revised');
    expect(revised).toHaveLength(1);
    expect(revised[0]).toMatchObject({ revision: 1, replaced: ['fetch', 'report'], added: ['fetch_mirror', 'report.r1'], reason: expect.stringContaining(failure?.reason ?? '?') });
    expect(revised[0]?.plan.steps.map((step) => step.id)).toEqual(['slow', 'fetch_mirror', 'report.r1']);
    expect(eventsOf(engine.events, 'goal.progress')).toHaveLength(1);

    // Balanced approves plans: the revision was asked as a diff against the running plan.
    const asked = eventsOf(engine.events, 'approval.requested').filter((event) => event.kind === 'plan');
    expect(asked).toHaveLength(2);
    // The revised plan's action is exactly the shared schema's, as the app parses it.
    expect(PlanRevisionActionSchema.safeParse(asked[1]?.action).success).toBe(true);
    expect(asked[1]?.action).toMatchObject({ revision: 1, failedStepId: 'fetch', replaced: ['fetch', 'report'], added: [{ id: 'fetch_mirror' }, { id: 'report.r1', dependencies: ['fetch_mirror'] }] });

    const stored = engine.runtime.store.runs.getSteps(result.runId).map((step) => [step.spec.id, step.status, step.revision, step.replacedIn]);
    expect(stored).toEqual([
      ['slow', 'completed', 0, null],
      ['fetch', 'failed', 0, 1],
      ['report', 'skipped', 0, 1],
      ['fetch_mirror', 'completed', 1, null],
      ['report.r1', 'completed', 1, null],
    ]);
    const finalRequest = engine.server.chatRequests.find((request) => request.purpose === 'final') as RecordedRequest;
    expect(requestText(finalRequest)).toContain('report.r1 (Summarize the mirrored data): result of report.r1');
    expect(requestText(finalRequest)).not.toContain('Summarize the data)');
  });

  it('two branches that fail at once are re-planned one after the other, the second revision keeping the first one\'s steps', async () => {
    let engine: EngineHarness | null = null;
    const failed = (id: string) => (engine?.events ?? []).some((event) => event.type === 'step.failed' && event.stepId === id);
    // The first revision is approved only once the other branch has failed too: its recovery waits its turn.
    const approvals: ApprovalChannel = {
      canRaiseBudgets: false,
      decide: async (request) => {
        if ((request.action as { revision?: number }).revision === 1) await expect.poll(() => failed('left') && failed('right')).toBe(true);
        return { verdict: 'approve' };
      },
    };
    engine = await startEngine(
      {
        reply: script({
          plan: () => planReply([{ id: 'left', description: 'Read the left source', expected_output: 'l' }, { id: 'right', description: 'Read the right source', expected_output: 'r' }]),
          replan: (request) => planReply([{ id: requestText(request).includes('Step left failed') ? 'left_mirror' : 'right_mirror', description: 'Read a mirror', expected_output: 'm' }]),
          step: (id) => (id.endsWith('_mirror') ? { content: `result of ${id}` } : loopOn(id)),
        }),
      },
      { approvals, tools: () => new ToolRegistry([fetchData]) },
    );
    const result = await engine.run('both sides', { concurrency: 2 });
    expect(result.status).toBe('completed');
    const revised = eventsOf(engine.events, 'plan.revised');
    expect(revised.map((event) => event.revision)).toEqual([1, 2]);
    expect(revised[1]?.plan.steps.map((step) => step.id).sort()).toEqual(['left_mirror', 'right_mirror']);
    expect(engine.runtime.store.runs.getSteps(result.runId).filter((step) => step.replacedIn === null).map((step) => [step.spec.id, step.status])).toEqual([
      ['left_mirror', 'completed'],
      ['right_mirror', 'completed'],
    ]);
  });

  it('a revised plan leaning on a replaced step is refused back to the model, which corrects it', async () => {
    const engine = await startEngine(
      {
        reply: script({
          plan: () => planReply([{ id: 'a', description: 'first', expected_output: 'x' }, { id: 'b', description: 'second', dependencies: ['a'], expected_output: 'y' }]),
          replan: (_request, index) => planReply(index === 0 ? [{ id: 'b2', description: 'second, again', dependencies: ['a'] }] : [{ id: 'b2', description: 'second, from scratch' }]),
          step: (id) => (id === 'a' ? loopOn('a') : { content: `result of ${id}` }),
        }),
      },
      { tools: () => new ToolRegistry([fetchData]) },
    );
    const result = await engine.run('two steps', { policy: 'permissive' });
    expect(result.status).toBe('completed');
    const replans = engine.server.chatRequests.filter((request) => request.purpose === 'replan');
    expect(replans).toHaveLength(2);
    expect(requestText(replans[1] as RecordedRequest)).toMatch(/Step "b2" depends on "a", which is being replaced/);
    expect(eventsOf(engine.events, 'plan.revised')[0]).toMatchObject({ replaced: ['a', 'b'], added: ['b2'] });
  });
});

describe('Goal Gradient Solver and escalation', () => {
  it('re-plans that never close the gap: two plain re-plans, one change of strategy, then an escalation that --approve auto ends, within a bounded number of calls', async () => {
    const engine = await startEngine(
      {
        reply: script({
          plan: () => planReply([{ id: 'prep', description: 'Prepare the inputs', expected_output: 'inputs' }, { id: 'solve', description: 'Solve it from the primary source', dependencies: ['prep'], expected_output: 'a solution' }]),
          replan: (_request, index) => planReply([{ id: 'solve', description: `Solve it, attempt ${index + 2}`, dependencies: ['prep'], expected_output: 'a solution' }]),
          step: (id) => (id === 'prep' ? { content: 'inputs ready' } : loopOn(id)),
        }),
      },
      { tools: () => new ToolRegistry([fetchData]) },
    );
    // maxReplans 5 leaves room: it is the solver, not the budget, that stops re-planning.
    const result = await engine.run('Solve the unsolvable', { maxReplans: 5 });
    expect(result.status).toBe('failed');
    expect(result.error).toMatch(/Step solve\.r3 could not be completed: loop_detected.*3 re-plan\(s\) of at most 5; gap trend 0\.50 → 0\.50 → 0\.50 → 0\.50/);

    const replans = engine.server.chatRequests.filter((request) => request.purpose === 'replan');
    expect(replans).toHaveLength(3);
    expect(requestText(replans[1] as RecordedRequest)).not.toContain('change strategy');
    const strategy = requestText(replans[2] as RecordedRequest);
    expect(strategy).toContain('These decompositions were tried and did not bring the goal closer; change strategy');
    expect(strategy).toContain('solve (revision 0): Solve it from the primary source — failed: loop_detected');
    expect(strategy).toContain('solve.r1 (revision 1): Solve it, attempt 2 — failed: loop_detected');
    expect(eventsOf(engine.events, 'plan.revised').map((event) => event.reason.startsWith('Change of strategy'))).toEqual([false, false, true]);

    expect(eventsOf(engine.events, 'goal.progress').map((event) => [event.gap, event.delta])).toEqual([
      [0.5, null],
      [0.5, 0],
      [0.5, 0],
      [0.5, 0],
    ]);
    const escalations = eventsOf(engine.events, 'escalation.raised');
    expect(escalations).toEqual([expect.objectContaining({ stepId: 'solve.r3', gapTrend: [0.5, 0.5, 0.5, 0.5], reason: expect.stringContaining('change of strategy') })]);
    const request = eventsOf(engine.events, 'approval.requested').find((event) => event.kind === 'escalation');
    expect(request?.approvalId).toBe(escalations[0]?.approvalId);
    expect(request?.action).toMatchObject({ stepId: 'solve.r3', gapTrend: [0.5, 0.5, 0.5, 0.5], replans: 3, maxReplans: 5, choices: ['retry', 'skip', 'edit', 'end'] });
    const action = EscalationActionSchema.parse(request?.action);
    expect(action.attempts.map((attempt) => attempt.stepId)).toEqual(['solve', 'solve.r1', 'solve.r2', 'solve.r3']);
    expect(eventsOf(engine.events, 'approval.resolved').at(-1)).toMatchObject({ approvalId: request?.approvalId, status: 'rejected' });

    // 1 plan + 1 prep + 4 looping steps × 3 calls + 3 re-plans: nothing more.
    expect(engine.server.chatRequests).toHaveLength(17);
    expect(engine.events.at(-1)).toMatchObject({ type: 'run.failed', error: expect.stringContaining('gap trend') });
  });

  it('with verification critic the gap is the critic\'s, on the goal\'s success criteria and the results so far', async () => {
    const gaps = [0.9, 0.6];
    const engine = await startEngine(
      {
        reply: script({
          plan: () => planReply([{ id: 'only', description: 'Do it', expected_output: 'done' }]),
          replan: () => planReply([{ id: 'only', description: 'Do it another way', expected_output: 'done' }]),
          critic: (_request, index) => ({ toolCalls: [{ name: 'submit_verdict', arguments: { verdict: 'fail', gap: gaps[index] ?? 1, reason: 'nothing done yet' } }] }),
          step: (id) => loopOn(id),
        }),
      },
      { tools: () => new ToolRegistry([fetchData]) },
    );
    const result = await engine.run('Reach the far goal', { verification: 'critic', maxReplans: 1 });
    expect(result).toMatchObject({ status: 'failed', error: expect.stringContaining('gap trend 0.90 → 0.60') });
    expect(eventsOf(engine.events, 'goal.progress').map((event) => [event.gap, event.delta])).toEqual([
      [0.9, null],
      [0.6, -0.3],
    ]);
    const critics = engine.server.chatRequests.filter((request) => request.purpose === 'critic' && requestText(request).includes('Criteria: The goal is reached'));
    expect(critics).toHaveLength(2);
    // The Meta-Validator's critic judged the plan and its one revision.
    expect(engine.server.chatRequests.filter((request) => request.purpose === 'critic')).toHaveLength(4);
    expect(requestText(critics[0] as RecordedRequest)).toContain('Task: Reach the far goal');
    expect(requestText(critics[0] as RecordedRequest)).toContain('Criteria: The goal is reached');
    expect(requestText(critics[1] as RecordedRequest)).toContain('only.r1 (Do it another way): not done (failed)');
  });

  it('--approve deny ends the run at an escalation too', async () => {
    const engine = await startEngine(
      { reply: script({ plan: () => planReply([{ id: 'only', description: 'Do it', expected_output: 'done' }]), step: (id) => loopOn(id) }) },
      { approvals: denyAll, tools: () => new ToolRegistry([fetchData]) },
    );
    const result = await engine.run('do it', { policy: 'permissive', maxReplans: 0 });
    expect(result).toMatchObject({ status: 'failed', error: expect.stringMatching(/The operator ended the run at the escalation: Denied/) });
    expect(eventsOf(engine.events, 'approval.requested').map((event) => event.kind)).toEqual(['escalation']);
  });

  it('stops at maxReplans even while the gap shrinks, and escalates', async () => {
    const engine = await startEngine(
      {
        reply: script({
          plan: () => planReply([{ id: 'only', description: 'Do it', expected_output: 'done' }]),
          replan: (_request, index) => planReply([{ id: 'only', description: `Do it, way ${index + 2}`, expected_output: 'done' }]),
          step: (id) => loopOn(id),
        }),
      },
      { tools: () => new ToolRegistry([fetchData]) },
    );
    const result = await engine.run('do it', { maxReplans: 1 });
    expect(result).toMatchObject({ status: 'failed', error: expect.stringContaining('1 re-plan(s) of at most 1') });
    expect(engine.server.chatRequests.filter((request) => request.purpose === 'replan')).toHaveLength(1);
    expect(eventsOf(engine.events, 'escalation.raised')).toEqual([expect.objectContaining({ stepId: 'only.r1', reason: 'the run has used its 1 re-plan(s)' })]);
  });
});

/** The app's side: answers escalations through the pending-approvals API with `answer`, approves everything else. */
function desk(engine: () => EngineHarness, answer: (request: ApprovalRequest, index: number) => ApprovalDecision): PendingApprovals {
  const pending = new PendingApprovals((id) => engine().runtime.store.runs.approvalStatus(id));
  let escalations = 0;
  pending.onChange(() => {
    for (const request of pending.list()) {
      queueMicrotask(() => {
        if (!pending.list().includes(request)) return;
        pending.answer(request.id, request.actionHash, request.kind === 'escalation' ? answer(request, escalations++) : { verdict: 'approve' });
      });
    }
  });
  return pending;
}

describe('the operator at an escalation (through the app approvals API)', () => {
  const plan = () =>
    planReply([
      { id: 'fetch', description: 'Fetch the data from the primary source', expected_output: 'the data' },
      { id: 'report', description: 'Summarize the data', dependencies: ['fetch'], expected_output: 'a summary' },
    ]);

  async function escalated(answer: (request: ApprovalRequest, index: number) => ApprovalDecision, step: (id: string, turn: number, request: RecordedRequest) => ScriptedReply) {
    let engine: EngineHarness | null = null;
    const approvals = desk(() => engine as EngineHarness, answer);
    engine = await startEngine({ reply: script({ plan, step }) }, { approvals, tools: () => new ToolRegistry([fetchData]) });
    return { engine, result: await engine.run('Report on the data', { maxReplans: 0 }) };
  }

  it('retry (approve) runs the step again as a new attempt; it passes and the run completes', async () => {
    const { engine, result } = await escalated(
      () => ({ verdict: 'approve' }),
      (id, turn) => (id === 'fetch' && turn < 3 ? loopOn('primary') : { content: `result of ${id}` }),
    );
    expect(result.status).toBe('completed');
    expect(stepRequests(engine, 'fetch')).toHaveLength(4);
    expect(stepRequests(engine, 'report')).toHaveLength(1);
    expect(engine.runtime.store.runs.getSteps(result.runId).find((step) => step.spec.id === 'fetch')).toMatchObject({ status: 'completed', attempt: 2 });
    // The new attempt starts a fresh conversation.
    expect(stepRequests(engine, 'fetch')[3]?.body.messages?.filter((message) => message.role === 'assistant')).toHaveLength(0);
  });

  it('skip: the step is skipped and its dependants run without its result', async () => {
    const { engine, result } = await escalated(
      () => ({ verdict: 'edit', edited: { choice: 'skip' } }),
      (id) => (id === 'fetch' ? loopOn('primary') : { content: `result of ${id}` }),
    );
    expect(result.status).toBe('completed');
    expect(stepRequests(engine, 'fetch')).toHaveLength(3);
    expect(stepRequests(engine, 'report')).toHaveLength(1);
    expect(requestText(stepRequests(engine, 'report')[0] as RecordedRequest)).toContain('- fetch: ');
    expect(engine.runtime.store.runs.getSteps(result.runId).map((step) => [step.spec.id, step.status])).toEqual([
      ['fetch', 'skipped'],
      ['report', 'completed'],
    ]);
  });

  it('a skipped step stays skipped across a resume: it is not offered to run again', async () => {
    const controller = new AbortController();
    let engine: EngineHarness | null = null;
    const approvals = desk(() => engine as EngineHarness, () => ({ verdict: 'edit', edited: { choice: 'skip' } }));
    let stopOnce = true;
    engine = await startEngine(
      {
        reply: script({
          plan,
          step: (id) => {
            if (id === 'fetch') return loopOn('primary');
            if (stopOnce) {
              stopOnce = false;
              controller.abort();
              return { content: 'too late', delayMs: 200 };
            }
            return { content: `result of ${id}` };
          },
        }),
      },
      { approvals, tools: () => new ToolRegistry([fetchData]) },
    );
    const first = await engine.run('Report on the data', { maxReplans: 0 }, controller.signal);
    expect(first.status).toBe('stopped');
    expect(engine.runtime.store.runs.getSteps(first.runId)[0]).toMatchObject({ status: 'skipped', waived: true });
    const resumed = await engine.resume(first.runId);
    expect(resumed.status).toBe('completed');
    expect(stepRequests(engine, 'fetch')).toHaveLength(3);
    expect(eventsOf(engine.events, 'run.resumed')[0]).toMatchObject({ rerunSteps: [] });
  });

  it('edit: the step runs with the operator\'s description and expected output', async () => {
    const { engine, result } = await escalated(
      () => ({ verdict: 'edit', edited: { choice: 'edit', description: 'Read the data from the local copy data.csv', expected_output: 'rows' } }),
      (id, _turn, request) => (id === 'fetch' && !requestText(request).includes('local copy') ? loopOn('primary') : { content: `result of ${id}` }),
    );
    expect(result.status).toBe('completed');
    const edited = stepRequests(engine, 'fetch').at(-1) as RecordedRequest;
    expect(requestText(edited)).toContain('Step fetch: Read the data from the local copy data.csv');
    expect(requestText(edited)).toContain('Expected output: rows');
    expect(engine.runtime.store.runs.getSteps(result.runId)[0]).toMatchObject({ spec: { description: 'Read the data from the local copy data.csv', expected_output: 'rows' }, status: 'completed' });
  });

  it('an answer that is no choice is asked again; end stops the run failed', async () => {
    const { engine, result } = await escalated(
      (_request, index) => (index === 0 ? { verdict: 'edit', edited: { choice: 'dance' } } : { verdict: 'edit', edited: { choice: 'end' } }),
      (id) => (id === 'fetch' ? loopOn('primary') : { content: `result of ${id}` }),
    );
    expect(result).toMatchObject({ status: 'failed', error: expect.stringContaining('The operator ended the run at the escalation') });
    expect(eventsOf(engine.events, 'escalation.raised')).toHaveLength(2);
    expect(stepRequests(engine, 'report')).toHaveLength(0);
  });

  it('a run ended at the escalation leads its run.failed error with the root cause and ends with what to do', async () => {
    const { engine, result } = await escalated(
      () => ({ verdict: 'edit', edited: { choice: 'end' } }),
      (id) => (id === 'fetch' ? loopOn('primary') : { content: `result of ${id}` }),
    );
    const [failed] = eventsOf(engine.events, 'run.failed');
    expect(failed?.error).toBe(result.error);
    expect(failed?.error).toMatch(/^Step fetch could not be completed: loop_detected/);
    expect(failed?.error?.endsWith(`Fix the cause, then \`archon resume ${result.runId}\` continues it.`)).toBe(true);
    expect(inAppTerms(failed?.error ?? '')).toMatch(/Fix the cause, then Resume continues it\.$/);
  });
});

describe('resume and the Meta-Validator', () => {
  it('a run stopped after a revision resumes with the revised plan: replaced steps stay replaced and nothing is re-planned', async () => {
    const controller = new AbortController();
    let stopped = false;
    const engine = await startEngine(
      {
        reply: script({
          plan: () => planReply([{ id: 'fetch', description: 'Fetch from the primary', expected_output: 'data' }, { id: 'report', description: 'Summarize', dependencies: ['fetch'], expected_output: 'summary' }]),
          replan: () => planReply([{ id: 'mirror', description: 'Fetch from the mirror', expected_output: 'data' }, { id: 'report', description: 'Summarize the mirror data', dependencies: ['mirror'], expected_output: 'summary' }]),
          step: (id) => {
            if (id === 'fetch') return loopOn('primary');
            if (id === 'mirror' && !stopped) {
              stopped = true;
              controller.abort();
              return { content: 'too late', delayMs: 200 };
            }
            return { content: `result of ${id}` };
          },
        }),
      },
      { tools: () => new ToolRegistry([fetchData]) },
    );
    const first = await engine.run('Report', {}, controller.signal);
    expect(first.status).toBe('stopped');
    const before = engine.server.chatRequests.length;
    const resumed = await engine.resume(first.runId);
    expect(resumed.status).toBe('completed');
    const after = engine.server.chatRequests.slice(before);
    expect(after.map((request) => request.purpose)).toEqual(['step', 'step', 'final']);
    expect(after.slice(0, 2).map(stepIdOf)).toEqual(['mirror', 'report.r1']);
    expect(engine.runtime.store.runs.getSteps(first.runId).map((step) => [step.spec.id, step.status, step.replacedIn])).toEqual([
      ['fetch', 'failed', 1],
      ['report', 'skipped', 1],
      ['mirror', 'completed', null],
      ['report.r1', 'completed', null],
    ]);
  });

  it('the Meta-Validator\'s findings are in the plan approval\'s packet and in validation.completed (stepId null)', async () => {
    const engine = await startEngine({
      reply: script({
        plan: () =>
          planReply([
            { id: 'a', description: 'Collect the numbers', expected_output: 'numbers' },
            { id: 'b', description: 'Collect the numbers.' },
            { id: 'c', description: 'Add them up', dependencies: ['a'], expected_output: 'their addition' },
          ]),
        step: (id) => ({ content: `result of ${id}` }),
      }),
    });
    expect((await engine.run('Sum the numbers')).status).toBe('completed');
    const verdict = eventsOf(engine.events, 'validation.completed').find((event) => event.stepId === null);
    expect(verdict).toMatchObject({ verdict: 'fail', checks: expect.arrayContaining([{ name: 'descriptions', passed: true }, expect.objectContaining({ name: 'no_duplicates', passed: false })]) });
    expect(verdict?.reasons).toEqual([
      'Step "b" does not say what it should produce (expected_output).',
      'Step "b" is linked to no other step; its result does not reach the final step "c".',
      'Steps "a" and "b" do the same thing.',
    ]);
    const packet = eventsOf(engine.events, 'approval.requested').find((event) => event.kind === 'plan')?.explanation;
    expect(packet?.risk.factors).toEqual(verdict?.reasons.map((reason) => `Meta-Validator: ${reason}`));
    expect(engine.events.findIndex((event) => event.type === 'validation.completed')).toBeLessThan(engine.events.findIndex((event) => event.type === 'approval.requested'));
  });
});
