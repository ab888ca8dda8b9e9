import { afterEach, describe, expect, it } from 'vitest';
import { denyAll } from '../../../src/core/approval/approval-channel';
import { measureAutonomySignals, TRUST_WINDOW } from '../../../src/core/approval/autonomy-signals';
import { PendingApprovals } from '../../../src/core/approval/pending-approvals';
import type { ArchonEvent, RunEvent } from '../../../src/shared/schemas/events';
import { planReply, startModelServer, type RecordedRequest, type ScriptedModelServer, type ScriptedReply } from '../../kit/scripted-model-server';
import { useEngine } from '../../support/engine';
import { useServices } from '../../support/runtime';

/** A start nobody cancels: these tests never leave before the run exists. */
const NO_ASKER = new AbortController().signal;

const openServices = useServices();
const startEngine = useEngine();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const think = (request: RecordedRequest): ScriptedReply => (request.purpose === 'plan' ? planReply([{ id: 'a', description: 'think it over' }]) : { content: 'thought' });

const resolvedOf = (events: readonly ArchonEvent[]) => events.filter((event): event is Extract<RunEvent, { type: 'approval.resolved' }> => event.type === 'approval.resolved');

describe('who decided an approval', () => {
  it("an answer through the app's command (approvals.decide) is the operator's, on the host's channel: announced, stored and in the audit report", async () => {
    server = await startModelServer({ reply: think });
    const { runtime, services } = openServices();
    runtime.store.updateSettings({ modelUrl: server.url, policy: 'balanced' });
    const events: ArchonEvent[] = [];
    const ended = new Promise<ArchonEvent>((resolve) =>
      runtime.bus.subscribe((event) => {
        events.push(event);
        if (event.type === 'run.completed' || event.type === 'run.failed') resolve(event);
      }),
    );
    services.approvals.onChange(() => {
      for (const request of services.approvals.list()) {
        queueMicrotask(() => void services.handlers['approvals.decide']({ approvalId: request.id, actionHash: request.actionHash, decision: { verdict: 'approve' } }, { signal: AbortSignal.timeout(60_000) }));
      }
    });
    const { runId } = await services.manager.start({ goal: 'think' }, NO_ASKER);
    expect(await ended).toMatchObject({ type: 'run.completed' });

    const resolved = resolvedOf(events);
    expect(resolved.length).toBe(2);
    for (const event of resolved) expect(event).toMatchObject({ decidedBy: 'operator', channel: 'page' });
    const rows = runtime.store.db.prepare('SELECT kind, decided_by, decided_channel FROM approvals WHERE run_id = ? ORDER BY rowid').all(runId);
    expect(rows).toEqual([
      { kind: 'plan', decided_by: 'operator', decided_channel: 'page' },
      { kind: 'final_answer', decided_by: 'operator', decided_channel: 'page' },
    ]);
    const report = await services.handlers['audit.report']({ runId }, { signal: AbortSignal.timeout(60_000) });
    expect(report.runs[0]?.approvals.decidedBy).toEqual({ 'operator:page': 2 });
  });

  it('a request no one answers in time says expiry, in its event and its row', async () => {
    const pending = new PendingApprovals((id) => engine.runtime.store.runs.approvalStatus(id));
    const engine = await startEngine({ reply: think }, { approvals: pending, expiryMs: { plan: 300 } });
    const result = await engine.run('nobody answers');
    expect(result.status).toBe('rejected');
    expect(resolvedOf(engine.events)).toEqual([expect.objectContaining({ status: 'expired', decidedBy: 'expiry' })]);
    expect(resolvedOf(engine.events)[0]).not.toHaveProperty('channel');
    expect(engine.runtime.store.db.prepare('SELECT status, decided_by, decided_channel FROM approvals').all()).toEqual([{ status: 'expired', decided_by: 'expiry', decided_channel: null }]);
  });

  it("a rule's answers (--approve deny) are not read as the operator's trust by adaptive autonomy", async () => {
    const engine = await startEngine({ reply: think }, { approvals: denyAll });
    expect((await engine.run('think')).status).toBe('rejected');
    const rows = engine.runtime.store.db.prepare('SELECT status, decided_by FROM approvals').all();
    expect(rows.length).toBeGreaterThanOrEqual(3);
    for (const row of rows) expect(row).toEqual({ status: 'rejected', decided_by: 'rule' });
    const decisions = engine.runtime.store.runs.recentDecisions(TRUST_WINDOW);
    expect(decisions).toEqual([]);
    expect(measureAutonomySignals({ goal: 'g', steps: [{ id: 's', description: 'd', dependencies: [] }] }, decisions, []).trust).toBeNull();
  });

  it("the desktop app's queue names the app as the operator's channel", async () => {
    const pending = new PendingApprovals((id) => engine.runtime.store.runs.approvalStatus(id));
    pending.onChange(() => {
      for (const request of pending.list()) queueMicrotask(() => pending.answer(request.id, request.actionHash, { verdict: 'approve' }));
    });
    const engine = await startEngine({ reply: think }, { approvals: pending });
    expect((await engine.run('think')).status).toBe('completed');
    expect(resolvedOf(engine.events).map((event) => [event.decidedBy, event.channel])).toEqual([
      ['operator', 'app'],
      ['operator', 'app'],
    ]);
  });
});
