import { afterEach, describe, expect, it } from 'vitest';
import type { ArchonEvent } from '../../src/shared/schemas/events';
import { planReply, startModelServer, type ScriptedModelServer } from '../kit/scripted-model-server';
import { useServices } from '../support/runtime';

/** A start nobody cancels: these tests never leave before the run exists. */
const NO_ASKER = new AbortController().signal;

const openServices = useServices();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("the app's runs", () => {
  it('take verification and the repair budget from Settings', async () => {
    server = await startModelServer({
      reply: (request) => {
        if (request.purpose === 'plan') return planReply([{ id: 'a', description: 'think' }]);
        if (request.purpose === 'critic') return { toolCalls: [{ name: 'submit_verdict', arguments: { verdict: 'fail', gap: 0.5, reason: 'Not it.', confidence: 0.9 } }] };
        return { content: 'an answer' };
      },
    });
    const { runtime, services } = openServices();
    runtime.store.updateSettings({ modelUrl: server.url, policy: 'permissive', verification: 'critic', repairBudget: 1, maxReplans: 0 });
    const ended = new Promise<ArchonEvent>((resolve) => runtime.bus.subscribe((event) => (event.type === 'run.failed' || event.type === 'run.completed') && resolve(event)));
    // With no re-plan allowed, the failed step goes to the operator, who ends the run.
    services.approvals.onChange(() => {
      for (const request of services.approvals.list()) {
        if (request.kind === 'escalation') queueMicrotask(() => services.approvals.answer(request.id, request.actionHash, { verdict: 'reject', feedback: 'end it' }));
      }
    });
    await services.manager.start({ goal: 'g' }, NO_ASKER);
    expect(await ended).toMatchObject({ type: 'run.failed' });
    // The first critic call judges the plan; after the step's answer is judged and repaired, one measures the gap to the goal;
    // the last measures it again before the operator is asked.
    expect(server.chatRequests.map((request) => request.purpose)).toEqual(['plan', 'critic', 'step', 'critic', 'critic', 'step', 'critic', 'critic']);
  });

  it('refuse to start an MCP server for the Test button while the emergency stop is latched', async () => {
    const { services } = openServices();
    await services.estop.trigger('operator', 'test');
    await expect(services.handlers['mcp.probe']({ name: 'shell', config: { command: '/bin/true' } }, { signal: AbortSignal.timeout(60_000) })).rejects.toMatchObject({
      code: 'ESTOP_LATCHED',
      message: expect.stringContaining('Re-arm'),
    });
  });
});
