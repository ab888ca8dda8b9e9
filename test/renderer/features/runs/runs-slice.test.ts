import { describe, expect, it } from 'vitest';
import type { ArchonClient } from '../../../../src/shared/ipc/client';
import type { RunEvent } from '../../../../src/shared/schemas/events';
import type { RunDetail } from '../../../../src/shared/schemas/run-detail';
import { createAppStore } from '../../../../src/renderer/src/store/app-store';

const run = { id: 'r', goal: 'g', status: 'running' as const, policy: 'balanced' as const, createdAt: 'now', updatedAt: 'now', answer: null, error: null, tokens: 0, costUsd: 0 };
const step = (id: string) => ({ spec: { id, description: id, dependencies: [] }, status: 'pending' as const, result: null, error: null });
const event = (seq: number, type: 'step.started' | 'plan.ready', stepId = 'a'): RunEvent =>
  type === 'plan.ready' ? { type, runId: 'r', seq, ts: 'now', plan: { goal: 'g', steps: [step('a').spec] } } : { type, runId: 'r', seq, ts: 'now', stepId };

/** A client whose `runs.get` answers only when the test says, so events can arrive in between. */
function slowClient(details: RunDetail[]) {
  const waiting: (() => void)[] = [];
  const client = {
    commands: new Proxy({}, {
      get: (_target, name) => async () => {
        if (name === 'runs.get') {
          await new Promise<void>((resolve) => waiting.push(resolve));
          return details.shift();
        }
        return name === 'runs.list' ? [] : undefined;
      },
    }),
    onEvent: () => () => undefined,
    onConnectionChange: () => () => undefined,
  } as unknown as ArchonClient;
  return { client, answer: () => waiting.shift()?.() };
}

describe('the runs slice', () => {
  it('folds events that arrived while the run was being fetched into what the fetch returned', async () => {
    const { client, answer } = slowClient([
      { run, steps: [], events: [], active: true },
      { run, steps: [step('a')], events: [event(1, 'plan.ready')], active: true },
    ]);
    const store = createAppStore(client);
    const selected = store.getState().selectRun('r');
    answer();
    await selected;
    store.getState().applyEvents([event(1, 'plan.ready')]);
    store.getState().applyEvents([event(2, 'step.started')]);
    answer();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(store.getState().detail?.steps.map((item) => item.status)).toEqual(['running']);
    expect(store.getState().detail?.events.map((item) => item.seq)).toEqual([1, 2]);
  });

  it('lists an event the fetch already returned once when it also arrives live, for the run and for its sub-agent’s run', async () => {
    const child = { ...run, id: 'c' };
    const message = (runId: string, seq: number, id: string): RunEvent => ({ type: 'bus.message', runId, seq, ts: 'now', id, correlationId: id, from: 'coordinator', to: 'subagent:c', topic: 'agent:subagent:c', kind: 'task', body: 'go' });
    const spawned: RunEvent = { type: 'subagent.started', runId: 'r', seq: 2, ts: 'now', stepId: 'a', childRunId: 'c', goal: 'sub', role: null, depth: 1 };
    const childStarted: RunEvent = { type: 'step.started', runId: 'c', seq: 1, ts: 'now', stepId: 'x' };
    const childDone: RunEvent = { type: 'step.completed', runId: 'c', seq: 2, ts: 'now', stepId: 'x', result: 'done' };
    const { client, answer } = slowClient([
      { run, steps: [step('a')], events: [event(1, 'plan.ready'), spawned, message('r', 3, 'm1')], active: true },
      { run: child, steps: [{ ...step('x'), status: 'completed' as const, result: 'done' }], events: [childStarted, childDone], active: true },
    ]);
    const store = createAppStore(client);
    const selected = store.getState().selectRun('r');
    answer();
    await selected;
    answer();
    await expect.poll(() => store.getState().children.c?.events.length).toBe(2);
    // The live batch was on its way while both runs were fetched: it repeats what they returned, then goes on.
    store.getState().applyEvents([spawned, message('r', 3, 'm1'), childStarted, message('r', 4, 'm2'), { ...childStarted, seq: 3, stepId: 'y' }]);
    const { detail, children } = store.getState();
    expect(detail?.events.map((item) => item.seq)).toEqual([1, 2, 3, 4]);
    expect(detail?.events.filter((item) => item.type === 'bus.message').map((item) => (item.type === 'bus.message' ? item.id : ''))).toEqual(['m1', 'm2']);
    expect(children.c?.events.map((item) => item.seq)).toEqual([1, 2, 3]);
    // The repeated step.started does not take the completed step back to running.
    expect(children.c?.steps.map((item) => item.status)).toEqual(['completed']);
  });
});
