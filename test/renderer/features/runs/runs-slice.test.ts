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
});
