import { afterEach, describe, expect, it } from 'vitest';
import { planReply, type RecordedRequest, startModelServer, type ScriptedModelServer } from '../../kit/scripted-model-server';
import { useServices } from '../../support/runtime';

/** A start nobody cancels: these tests never leave before the run exists. */
const NO_ASKER = new AbortController().signal;

const openServices = useServices();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const isLessons = (request: RecordedRequest) => request.purpose === 'lessons';

describe("the app's Dreamer (as `archon serve` and the app compose it)", () => {
  it('dreams after a run ends, and the emergency stop pressed while the model answers the lessons request ends the dream stopped', async () => {
    server = await startModelServer({
      reply: (request) => {
        if (isLessons(request)) return { hang: true };
        if (request.purpose === 'plan') return planReply([{ id: 'sum', description: 'add up the invoices' }]);
        return { content: 'The total is 60.' };
      },
    });
    const { runtime, services } = openServices();
    runtime.store.updateSettings({ modelUrl: server.url, policy: 'permissive' });
    // The operator accepts the run's final answer; the run ends, and the Dreamer starts.
    services.approvals.onChange(() => {
      for (const request of services.approvals.list()) queueMicrotask(() => services.approvals.answer(request.id, request.actionHash, { verdict: 'approve' }));
    });
    await services.manager.start({ goal: 'total the invoices' }, NO_ASKER);
    await expect.poll(() => server?.requests.filter(isLessons).length, { timeout: 30_000 }).toBe(1);
    const dream = () => runtime.store.runs.listRuns(5).find((run) => run.kind === 'dream');
    expect(dream()?.status).toBe('running');

    await services.estop.trigger('operator', 'stop the dream');
    await expect.poll(() => dream()?.status, { timeout: 30_000 }).toBe('stopped');
    expect(runtime.store.runs.events(dream()?.id ?? '').at(-1)).toMatchObject({ type: 'run.stopped', kind: 'dream' });
    expect(server.requests.filter(isLessons)).toHaveLength(1);
  });
});
