import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../../src/shared/schemas/events';
import { DOWNSTREAM_SHOWN } from '../../../src/shared/plan-graph';
import { planReply, stepIdOf, toolMessagesOf, type RecordedRequest, type ScriptedReply } from '../../kit/scripted-model-server';
import { useEngine } from '../../support/engine';

const startEngine = useEngine();

type Requested = Extract<RunEvent, { type: 'approval.requested' }>;

/** A chain of `length` steps, each after the one before; even steps write a file, odd ones answer from what they are given. */
function chainScript(length: number, tool: (index: number) => ScriptedReply | null) {
  const steps = Array.from({ length }, (_, index) => ({ id: `s${index}`, description: `part ${index}`, dependencies: index === 0 ? [] : [`s${index - 1}`] }));
  return (request: RecordedRequest): ScriptedReply => {
    if (request.purpose === 'plan') return planReply(steps);
    if (request.purpose === 'final') return { content: 'all parts done' };
    const index = Number((stepIdOf(request) ?? 's0').slice(1));
    const call = toolMessagesOf(request).length === 0 ? tool(index) : null;
    return call ?? { content: `part ${index} done` };
  };
}

const count = <T>(items: readonly T[], predicate: (item: T) => boolean) => items.filter(predicate).length;

describe('approval records of bounded size', () => {
  it('a 60-step plan under balanced is not made supervised by its size: it asks once per tool call with side effects, the plan and the final answer, never per model call', async () => {
    const writes = (index: number): ScriptedReply | null => (index % 2 === 0 ? { toolCalls: [{ name: 'write_file', arguments: { path: `part-${index}.txt`, content: `part ${index}` } }] } : null);
    const engine = await startEngine({ reply: chainScript(60, writes) });
    const result = await engine.run('sixty parts', { policy: 'balanced' });
    expect(result.status).toBe('completed');

    // Its size is the only measured signal in the strict range: that tightens to strict, never to supervised.
    const tightened = engine.events.flatMap((event) => (event.type === 'policy.tightened' ? [{ from: event.from, to: event.to, high: event.reasons[0] }] : []));
    expect(tightened).toEqual([{ from: 'balanced', to: 'strict', high: 'high: complexity 1.00' }]);
    const requested = engine.events.filter((event): event is Requested => event.type === 'approval.requested');
    const kinds = requested.map((event) => event.kind);
    const sideEffectCalls = count(engine.events, (event) => event.type === 'tool.started' && event.sideEffects !== undefined && event.sideEffects !== 'none');
    expect(sideEffectCalls).toBe(30);
    expect(count(kinds, (kind) => kind === 'tool_call')).toBeLessThanOrEqual(sideEffectCalls);
    expect(count(kinds, (kind) => kind === 'plan')).toBe(1);
    expect(count(kinds, (kind) => kind === 'final_answer')).toBe(1);
    expect(kinds.filter((kind) => !['tool_call', 'plan', 'final_answer'].includes(kind))).toEqual([]);
    expect(engine.server.chatRequests.length).toBeGreaterThan(90);

    // One approval row per request: linear in the steps, a small constant each.
    const db = engine.runtime.store.db;
    const rows = db.prepare('SELECT kind FROM approvals WHERE run_id = ?').all(result.runId);
    expect(rows).toHaveLength(requested.length);
    expect(rows.length).toBeLessThanOrEqual(sideEffectCalls + 2);

    // Every packet names at most 10 later steps and counts them all: s0's write has 59 after it.
    for (const event of requested) expect(event.explanation.downstream.length).toBeLessThanOrEqual(DOWNSTREAM_SHOWN);
    const first = requested.find((event) => event.kind === 'tool_call' && event.stepId === 's0');
    expect(first?.explanation.downstream).toEqual(Array.from({ length: DOWNSTREAM_SHOWN }, (_, index) => `s${index + 1}`));
    expect(first?.explanation.downstreamCount).toBe(59);

    // What a person (here `--approve auto`'s channel) decided is an approval; what the policy let through says so on the call.
    expect(db.prepare('SELECT DISTINCT allowed_by FROM tool_calls WHERE run_id = ?').all(result.runId)).toEqual([{ allowed_by: 'approval' }]);
    expect(db.prepare("SELECT DISTINCT allowed_by FROM model_calls WHERE run_id = ? AND purpose = 'step'").all(result.runId)).toEqual([{ allowed_by: 'policy:strict' }]);
  });

  it('a call the policy lets through is recorded as such on the call, with no approval row', async () => {
    const compute = (): ScriptedReply => ({ toolCalls: [{ name: 'calculator', arguments: { expression: '2+2' } }] });
    const engine = await startEngine({ reply: chainScript(2, compute) });
    const result = await engine.run('two sums', { policy: 'balanced' });
    expect(result.status).toBe('completed');
    const db = engine.runtime.store.db;
    expect(db.prepare('SELECT tool, allowed_by FROM tool_calls WHERE run_id = ?').all(result.runId)).toEqual([
      { tool: 'calculator', allowed_by: 'policy:balanced' },
      { tool: 'calculator', allowed_by: 'policy:balanced' },
    ]);
    expect(db.prepare('SELECT kind FROM approvals WHERE run_id = ? ORDER BY rowid').all(result.runId)).toEqual([{ kind: 'plan' }, { kind: 'final_answer' }]);
    expect(db.prepare('SELECT DISTINCT allowed_by FROM model_calls WHERE run_id = ?').all(result.runId)).toEqual([{ allowed_by: 'policy:balanced' }]);
  });
});
