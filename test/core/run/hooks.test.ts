import { describe, expect, it, vi } from 'vitest';
import { CAPABILITIES, runCapabilities } from '../../../src/core/capabilities';
import { memory } from '../../../src/core/memory/run-memory';
import type { RunCapability } from '../../../src/core/run/run-context';
import { planReply, stepIdOf, type RecordedRequest, type ScriptedReply } from '../../kit/scripted-model-server';
import { useEngine } from '../../support/engine';

const startEngine = useEngine();

/** A capability that answers nothing and records each point it is called at. */
function observer(calls: string[]): RunCapability {
  return {
    name: 'observer',
    hooks: {
      beforePlan: async () => (calls.push('beforePlan'), null),
      planApproved: (_context, plan) => void calls.push(`planApproved:${plan.steps.map((step) => step.id).join(',')}`),
      beforeStep: async (_context, step) => (calls.push(`beforeStep:${step.id}`), null),
      runStep: (_context, step) => void calls.push(`runStep:${step.id}`),
      afterModelTurn: (_context, step) => void calls.push(`afterModelTurn:${step.id}`),
      reviewResult: (_context, step) => void calls.push(`reviewResult:${step.id}`),
      stepRepaired: async (_context, step) => void calls.push(`stepRepaired:${step.id}`),
      stepFailed: (_context, step, failure) => void calls.push(`stepFailed:${step.id}:${failure.reason.split(':')[0] ?? ''}`),
      beforeFinalAnswer: async (_context, _plan, states) => (calls.push(`beforeFinalAnswer:${[...states.keys()].join(',')}`), states),
      reviewFinalAnswer: (_context, draft) => void calls.push(`reviewFinalAnswer:${draft.answer}`),
      runEnded: (_context, ending) => void calls.push(`runEnded:${ending.status}`),
    },
  };
}

/** Step a refuses once (a repair), step b calls tools until its iteration cap (a failure, re-planned as c), c answers. */
function script(): (request: RecordedRequest) => ScriptedReply {
  const turns = new Map<string, number>();
  return (request) => {
    if (request.purpose === 'plan') return planReply([{ id: 'a', description: 'count the crates' }, { id: 'b', description: 'weigh the crates', dependencies: ['a'] }]);
    if (request.purpose === 'replan') return planReply([{ id: 'c', description: 'estimate the weight', dependencies: ['a'] }]);
    if (request.purpose === 'final') return { content: 'final answer' };
    const id = stepIdOf(request) ?? '?';
    const turn = turns.get(id) ?? 0;
    turns.set(id, turn + 1);
    if (id === 'a') return { content: turn === 0 ? "I cannot count them." : '12 crates' };
    if (id === 'b') return { toolCalls: [{ name: 'read_file', arguments: { path: `scale-${turn}.txt` } }] };
    return { content: 'about 300 kg' };
  };
}

describe('run hooks', () => {
  it('calls a capability registered with the composition at each named point of a real run, in order', async () => {
    const calls: string[] = [];
    const engine = await startEngine({ reply: script() }, { capabilities: [observer(calls)] });
    const result = await engine.run('count and weigh the crates', { maxIterations: 2 });
    expect(result.status).toBe('completed');
    expect(calls).toEqual([
      'beforePlan',
      'planApproved:a,b',
      'runStep:a',
      'beforeStep:a',
      'afterModelTurn:a',
      'reviewResult:a',
      'stepRepaired:a',
      'afterModelTurn:a',
      'reviewResult:a',
      'runStep:b',
      'beforeStep:b',
      'afterModelTurn:b',
      'afterModelTurn:b',
      'stepFailed:b:iteration_cap',
      'runStep:c',
      'beforeStep:c',
      'afterModelTurn:c',
      'reviewResult:c',
      'beforeFinalAnswer:a,b,c',
      'reviewFinalAnswer:final answer',
      'runEnded:completed',
    ]);
  });

  it('never calls a capability a run does not have: a run with --no-memory runs without the memory capability\'s hooks', async () => {
    const hooks = memory.hooks;
    const spies = [vi.spyOn(hooks, 'beforePlan'), vi.spyOn(hooks, 'beforeStep'), vi.spyOn(hooks, 'runEnded')];
    try {
      const engine = await startEngine({ reply: script() }, { memory: true });
      expect((await engine.run('count and weigh the crates', { maxIterations: 2, memory: false })).status).toBe('completed');
      expect(spies.map((spy) => spy.mock.calls.length)).toEqual([0, 0, 0]);
      expect((await engine.run('count and weigh the crates', { maxIterations: 2 })).status).toBe('completed');
      expect(spies.map((spy) => spy.mock.calls.length)).toEqual([1, 3, 1]);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });

  it('lists every capability once, in the order their hooks are called', () => {
    expect(CAPABILITIES.map((capability) => capability.name)).toEqual(['goal-contract', 'memory', 'validation', 'subagents', 'recovery', 'conflicts']);
    expect(runCapabilities({})).toContain(memory);
    expect(runCapabilities({ memory: false }).map((capability) => capability.name)).toEqual(['goal-contract', 'validation', 'subagents', 'recovery', 'conflicts']);
    expect(runCapabilities({ verification: 'off' }).map((capability) => capability.name)).toEqual(['memory', 'validation', 'subagents', 'recovery', 'conflicts']);
  });
});
