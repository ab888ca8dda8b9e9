import { describe, expect, it } from 'vitest';
import { callCapsFor } from '../../../src/core/budget/budget-meter';
import { planReply } from '../../kit/scripted-model-server';
import { useEngine } from '../../support/engine';

const startEngine = useEngine();
const STEPS = 1000;

/** A chain: each step needs the one before it. */
function chain(length: number) {
  return Array.from({ length }, (_, index) => ({ id: `s${index}`, description: `step ${index}`, dependencies: index === 0 ? [] : [`s${index - 1}`] }));
}

describe('large plans', () => {
  it('runs a 1,000-step plan to completion once the cap is raised, past the 500 model calls a small plan is held to', { timeout: 600_000 }, async () => {
    const engine = await startEngine({ reply: (request) => (request.purpose === 'plan' ? planReply(chain(STEPS)) : { content: 'done' }) });

    const result = await engine.run('a long chain', { maxPlanSteps: STEPS, verification: 'off', concurrency: 4 });

    expect(result.status).toBe('completed');
    const steps = engine.runtime.store.runs.getSteps(result.runId);
    expect(steps).toHaveLength(STEPS);
    expect(steps.every((step) => step.status === 'completed')).toBe(true);
    // The chain ran in order: each step started after the one it depends on completed.
    const order = engine.events.filter((event) => event.type === 'step.started').map((event) => (event.type === 'step.started' ? event.stepId : ''));
    expect(order).toEqual(chain(STEPS).map((step) => step.id));
    expect(engine.server.requests.filter((request) => request.purpose === 'step').length).toBe(STEPS);
    expect(engine.server.chatRequests.length).toBeGreaterThan(callCapsFor(0, 10).maxModelCalls);
  });

  it('refuses a plan over the cap, naming the setting and the flag that raise it', async () => {
    const engine = await startEngine({ reply: (request) => (request.purpose === 'plan' ? planReply(chain(65)) : { content: 'done' }) });

    const result = await engine.run('too many steps');

    expect(result.status).toBe('failed');
    expect(result.error).toMatch(/65 steps; at most 64/);
    expect(result.error).toMatch(/maxPlanSteps/);
    expect(result.error).toMatch(/--max-steps/);
    expect(engine.server.requests.filter((request) => request.purpose === 'step')).toHaveLength(0);
  });

  it('sizes the run caps by the plan, never below the floor', () => {
    expect(callCapsFor(0, 10)).toEqual({ maxModelCalls: 500, maxToolCalls: 1000 });
    expect(callCapsFor(1000, 10)).toEqual({ maxModelCalls: 12_050, maxToolCalls: 24_100 });
  });
});
