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

/** A fan-out: one root, every other step needs it alone. */
function fanOut(length: number) {
  return Array.from({ length }, (_, index) => ({ id: `s${index}`, description: `step ${index}`, dependencies: index === 0 ? [] : ['s0'] }));
}

describe('large plans', () => {
  it('runs a 1,000-step plan (one root, 999 steps after it) to completion once the cap is raised, past the 500 model calls a small plan is held to', { timeout: 600_000 }, async () => {
    const engine = await startEngine({ reply: (request) => (request.purpose === 'plan' ? planReply(fanOut(STEPS)) : { content: 'done' }) });

    const result = await engine.run('a wide plan', { maxPlanSteps: STEPS, verification: 'off', concurrency: 4 });

    expect(result.status).toBe('completed');
    const steps = engine.runtime.store.runs.getSteps(result.runId);
    expect(steps).toHaveLength(STEPS);
    expect(steps.every((step) => step.status === 'completed')).toBe(true);
    // The root ran first, then every other step, each once, in plan order among the ready.
    const order = engine.events.filter((event) => event.type === 'step.started').map((event) => (event.type === 'step.started' ? event.stepId : ''));
    expect(order).toEqual(fanOut(STEPS).map((step) => step.id));
    const rootDone = engine.events.findIndex((event) => event.type === 'step.completed' && event.stepId === 's0');
    expect(engine.events.findIndex((event) => event.type === 'step.started' && event.stepId === 's1')).toBeGreaterThan(rootDone);
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
