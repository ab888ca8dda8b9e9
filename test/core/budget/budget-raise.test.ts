import { describe, expect, it } from 'vitest';
import type { ApprovalChannel } from '../../../src/core/approval/approval-channel';
import type { ApprovalRequest } from '../../../src/shared/schemas/approval';
import type { RunEvent } from '../../../src/shared/schemas/events';
import { planReply } from '../../kit/scripted-model-server';
import { useEngine } from '../../support/engine';

const startEngine = useEngine();

/** Approves everything; a budget raise is answered only after the other steps have had their turn to break the cap too. */
function raisingHuman(): ApprovalChannel & { raises: ApprovalRequest[] } {
  const raises: ApprovalRequest[] = [];
  return {
    raises,
    canRaiseBudgets: true,
    async decide(request) {
      if (request.kind !== 'budget_raise') return { verdict: 'approve' };
      raises.push(request);
      for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
      return { verdict: 'approve' };
    },
  };
}

const fanOut = Array.from({ length: 8 }, (_, index) => ({ id: `s${index + 1}`, description: `part ${index + 1}` }));

describe('budget raises', () => {
  it('an 8-way fan-out hitting a 1,500-token cap asks once; approving sets the cap to exactly the proposed 3,000, announced in budget.updated', async () => {
    const human = raisingHuman();
    const engine = await startEngine(
      {
        reply: (request) => {
          if (request.purpose === 'plan') return { ...planReply(fanOut), usage: { prompt_tokens: 80, completion_tokens: 20 } };
          return { content: 'done', usage: { prompt_tokens: 120, completion_tokens: 30 } };
        },
        latencyMs: 10,
      },
      { approvals: human },
    );
    const result = await engine.run('fan out', { maxTokens: 1500, concurrency: 8, policy: 'permissive' });
    expect(result.status).toBe('completed');
    expect(human.raises).toHaveLength(1);
    expect(human.raises[0]?.action).toMatchObject({ cap: 'tokens', proposed: 3000 });
    expect(human.raises[0]?.summary).toContain('Raise the cap to 3,000 tokens');
    const requested = engine.events.filter((event) => event.type === 'approval.requested' && event.kind === 'budget_raise');
    expect(requested).toHaveLength(1);
    const resolvedAt = engine.events.findIndex((event) => event.type === 'approval.resolved' && event.approvalId === (requested[0] as Extract<RunEvent, { type: 'approval.requested' }>).approvalId);
    const caps = engine.events.slice(resolvedAt).flatMap((event) => (event.type === 'budget.updated' ? [event.maxTokens] : []));
    expect(caps[0]).toBe(3000);
    expect(new Set(caps)).toEqual(new Set([3000]));
  });

  it('a refused raise ends every waiting step with the budget exhausted, still after one request', async () => {
    const raises: ApprovalRequest[] = [];
    const engine = await startEngine(
      {
        reply: (request) => {
          if (request.purpose === 'plan') return { ...planReply(fanOut), usage: { prompt_tokens: 80, completion_tokens: 20 } };
          return { content: 'done', usage: { prompt_tokens: 120, completion_tokens: 30 } };
        },
        latencyMs: 10,
      },
      {
        approvals: {
          canRaiseBudgets: true,
          async decide(request) {
            if (request.kind !== 'budget_raise') return { verdict: 'approve' };
            raises.push(request);
            for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
            return { verdict: 'reject', feedback: 'no more' };
          },
        },
      },
    );
    const result = await engine.run('fan out', { maxTokens: 1500, concurrency: 8, policy: 'permissive' });
    expect(result.status).toBe('budget_exhausted');
    expect(raises).toHaveLength(1);
    expect(engine.events.at(-1)).toMatchObject({ type: 'run.failed', error: expect.stringContaining('Budget exhausted') });
  });
});
