import { describe, expect, it } from 'vitest';
import { approveAll } from '../../../src/core/approval/approval-channel';
import { measureAutonomySignals, TRUST_WINDOW } from '../../../src/core/approval/autonomy-signals';
import type { RunStore } from '../../../src/core/store/run-store';
import type { ApprovalKind, ApprovalStatus } from '../../../src/shared/schemas/approval';
import type { RunEvent } from '../../../src/shared/schemas/events';
import type { Plan } from '../../../src/shared/schemas/plan';
import type { RunOptions } from '../../../src/shared/schemas/run';
import { planReply } from '../../kit/scripted-model-server';
import { useEngine } from '../../support/engine';
import { useRuntimes } from '../../support/runtime';

const openRuntime = useRuntimes();
const startEngine = useEngine();

const explanation = { summary: '', confidence: null, risk: { level: 'low' as const, factors: [] }, reversibility: 'not_applicable' as const, cost: { tokensUsed: 0, tokensLeft: null, estimatedUsd: 0 }, downstream: [], alternatives: [] };
const options: RunOptions = { modelUrl: 'http://127.0.0.1:1/v1', model: '', policy: 'balanced', concurrency: null, maxTokens: null, maxCostUsd: null, workspace: '/tmp', maxIterations: 10, verification: 'checks', repairBudget: 2, maxReplans: 3 };

/** Answers the operator gave in an earlier run of this data dir, oldest first, written as the approval gate writes them. */
async function history(runs: RunStore, answers: { kind: ApprovalKind; tool?: string; status: ApprovalStatus }[]): Promise<void> {
  runs.createRun({ id: 'earlier', goal: 'earlier', policy: 'balanced', options, now: new Date().toISOString() });
  for (const [index, answer] of answers.entries()) {
    const at = new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString();
    const action = answer.tool ? { tool: answer.tool, args: {} } : {};
    runs.createApproval({ id: `a${index}`, runId: 'earlier', stepId: null, kind: answer.kind, summary: '', action, actionHash: 'h', explanation, requestedAt: at, expiresAt: null });
    await runs.resolveApproval(`a${index}`, answer.status, { verdict: 'approve' }, at, { decidedBy: 'operator', channel: 'app' });
  }
}

const plan = (tool?: string): Plan => ({ goal: 'g', steps: [{ id: 's', description: 'd', dependencies: [], ...(tool ? { tool } : {}) }] });
const verdict = (seq: number, confidence: number | null): RunEvent => ({ type: 'validation.completed', runId: 'r', seq, ts: 'now', stepId: 's', verdict: 'pass', gap: 0, confidence, reasons: [], checks: [] });

describe('measured autonomy signals', () => {
  it('reads trust from the operator\'s recent answers on this kind of action, across runs, and leaves it out below three answers', async () => {
    const { store } = openRuntime();
    await history(store.runs, [
      { kind: 'tool_call', tool: 'run_command', status: 'rejected' },
      { kind: 'tool_call', tool: 'run_command', status: 'locked' },
      { kind: 'tool_call', tool: 'run_command', status: 'edited' },
      { kind: 'tool_call', tool: 'read_file', status: 'approved' },
      { kind: 'budget_raise', status: 'rejected' },
      { kind: 'plan', status: 'approved' },
    ]);
    const decisions = store.runs.recentDecisions(TRUST_WINDOW);
    expect(decisions.map((decision) => decision.status)).toEqual(['approved', 'rejected', 'approved', 'edited', 'locked', 'rejected']);
    // run_command: rejected 1, locked 1, edited 0.5, and the plan approved 0; the budget is not an action.
    expect(measureAutonomySignals(plan('run_command'), decisions, []).trust).toBeCloseTo(2.5 / 4);
    // read_file: approved, and the plan approved: only two answers say nothing yet.
    expect(measureAutonomySignals(plan('read_file'), decisions, []).trust).toBeNull();
    // A plan that names no tool may call any: every tool call counts.
    expect(measureAutonomySignals(plan(), decisions, []).trust).toBeCloseTo(2.5 / 5);
  });

  it('reads uncertainty from the validators\' confidence in this run, and knowledge stays unmeasured', () => {
    const signals = measureAutonomySignals(plan(), [], [verdict(1, 0.9), verdict(2, null), verdict(3, 0.5)]);
    expect(signals.uncertainty).toBeCloseTo(0.3);
    expect(signals.trust).toBeNull();
    expect(signals.knowledge).toBeNull();
    expect(measureAutonomySignals(plan(), [], []).uncertainty).toBeNull();
  });

  it('tightens a permissive run when the operator kept refusing such actions, and names trust as the reason', async () => {
    const engine = await startEngine({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'one', description: 'compute' }]) : { content: 'ok' }) }, { approvals: approveAll });
    await history(engine.runtime.store.runs, [
      { kind: 'tool_call', tool: 'write_file', status: 'rejected' },
      { kind: 'tool_call', tool: 'run_command', status: 'rejected' },
      { kind: 'final_answer', status: 'rejected' },
    ]);
    expect((await engine.run('calm goal', { policy: 'permissive' })).status).toBe('completed');
    const tightened = engine.events.find((event) => event.type === 'policy.tightened');
    expect(tightened).toMatchObject({ from: 'permissive', to: 'balanced', reasons: expect.arrayContaining(['high: trust 1.00', 'not measured (left out): risk, uncertainty, knowledge']) });
  });

  it('keeps a permissive run permissive without such a history', async () => {
    const engine = await startEngine({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'one', description: 'compute' }]) : { content: 'ok' }) }, { approvals: approveAll });
    expect((await engine.run('calm goal', { policy: 'permissive' })).status).toBe('completed');
    expect(engine.events.some((event) => event.type === 'policy.tightened')).toBe(false);
  });
});
