import { describe, expect, it } from 'vitest';
import { approveAll, denyAll, type ApprovalChannel } from '../../../src/core/approval/approval-channel';
import { dreamRun, type DreamRunResult } from '../../../src/core/memory/dream-run';
import { modelConnector } from '../../../src/core/model/connect';
import { EmergencyStop } from '../../../src/core/stop/emergency-stop';
import type { Policy, RunOptions } from '../../../src/shared/schemas/run';
import { DEFAULT_SETTINGS, type Settings } from '../../../src/shared/schemas/settings';
import { planReply, requestText, type RecordedRequest, type ScriptedReply } from '../../kit/scripted-model-server';
import { useEngine, type EngineHarness } from '../../support/engine';

const startEngine = useEngine();

function reply(request: RecordedRequest): ScriptedReply {
  if (request.purpose === 'plan') return planReply([{ id: 'sum', description: 'add up the invoices' }]);
  if (request.purpose === 'lessons') {
    const runId = /^Run (\S+) \(/m.exec(requestText(request))?.[1] ?? 'none';
    return { toolCalls: [{ name: 'submit_lessons', arguments: { lessons: [{ text: 'Totals first.', evidence: [runId], applies_to: 'sums' }] } }] };
  }
  return { content: 'The total is 60.' };
}

interface DreamSetup {
  policy?: Policy;
  approvals?: ApprovalChannel;
  settings?: Partial<Settings>;
  estop?: EmergencyStop;
}

function dreamOf(engine: EngineHarness, setup: DreamSetup = {}): Promise<DreamRunResult> {
  const { runtime } = engine;
  const options: RunOptions = { modelUrl: engine.server.url, model: '', policy: setup.policy ?? 'balanced', concurrency: null, maxTokens: null, maxCostUsd: null, workspace: engine.workspace, maxIterations: 10, verification: 'checks', repairBudget: 2, maxReplans: 3 };
  return dreamRun(
    {
      runtime,
      estop: setup.estop ?? new EmergencyStop(runtime.store, runtime.bus, runtime.now),
      approvals: setup.approvals ?? approveAll,
      connect: modelConnector({}),
      options,
      settings: { ...DEFAULT_SETTINGS, ...setup.settings },
    },
    new AbortController().signal,
  );
}

const lessonRequests = (engine: EngineHarness) => engine.server.requests.filter((request) => request.purpose === 'lessons');

function modelCalls(engine: EngineHarness, runId: string | null): { purpose: string; allowed_by: string | null }[] {
  return engine.runtime.store.db.prepare('SELECT purpose, allowed_by FROM model_calls WHERE run_id = ? ORDER BY started_at').all(runId) as { purpose: string; allowed_by: string | null }[];
}

describe('a dream is a run of kind dream', () => {
  it('is listed as a run, its lessons request is one model_calls row charged to it, and its events carry its kind', async () => {
    const engine = await startEngine({ reply });
    await engine.run('total the invoices');
    const before = engine.server.requests.length;
    const ended = await dreamOf(engine);
    expect(ended).toMatchObject({ status: 'completed', error: null });
    // Every request the server received for the dream (its probe's too) is one row of the dream's.
    expect(modelCalls(engine, ended.runId).map((call) => call.purpose).sort()).toEqual(engine.server.requests.slice(before).map((request) => request.purpose).sort());
    expect(engine.runtime.store.runs.listRuns(10).map((run) => run.kind)).toEqual(['dream', 'goal']);
    const lessons = modelCalls(engine, ended.runId).filter((call) => call.purpose === 'lessons');
    expect(lessons).toHaveLength(lessonRequests(engine).length);
    expect(lessons).toEqual([{ purpose: 'lessons', allowed_by: 'policy:balanced' }]);
    expect(engine.runtime.store.runs.getRun(ended.runId ?? '')?.summary.tokens).toBeGreaterThan(0);
    const events = engine.runtime.store.runs.events(ended.runId ?? '');
    expect(events[0]).toMatchObject({ type: 'run.started', kind: 'dream' });
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', kind: 'dream' });
    expect(events.some((event) => event.type === 'model.completed' && event.purpose === 'lessons')).toBe(true);
  });

  it('is never itself dreamt, and with nothing to dream makes no run and asks nothing', async () => {
    const engine = await startEngine({ reply });
    await engine.run('total the invoices');
    await dreamOf(engine);
    const before = engine.server.requests.length;
    const again = await dreamOf(engine);
    expect(again).toMatchObject({ runId: null, status: 'completed' });
    expect(engine.server.requests.length).toBe(before);
    expect(engine.runtime.store.runs.listRuns(10)).toHaveLength(2);
  });

  it('is refused while the emergency stop is latched: no run, no request to the model server', async () => {
    const engine = await startEngine({ reply });
    await engine.run('total the invoices');
    const estop = new EmergencyStop(engine.runtime.store, engine.runtime.bus, engine.runtime.now);
    await estop.trigger('operator', 'stop everything');
    const before = engine.server.requests.length;
    await expect(dreamOf(engine, { estop })).rejects.toMatchObject({ code: 'ESTOP_LATCHED' });
    expect(engine.server.requests.length).toBe(before);
    expect(engine.runtime.store.runs.listRuns(10).map((run) => run.kind)).toEqual(['goal']);
  });

  it("is refused by the day's token cap before its model call: budget_exhausted, nothing asked, the runs left undreamt", async () => {
    const engine = await startEngine({ reply });
    const run = await engine.run('total the invoices');
    const ended = await dreamOf(engine, { settings: { dailyMaxTokens: 1 } });
    expect(ended.status).toBe('budget_exhausted');
    expect(ended.error).toMatch(/today's cap of 1 tokens/);
    expect(lessonRequests(engine)).toHaveLength(0);
    expect(engine.runtime.store.dreams.undreamt(new Set(['completed']), 5)).toEqual([run.runId]);
  });

  it('under supervised asks before its model call like any run: a no ends it rejected without the request, a yes is recorded on the call', async () => {
    const engine = await startEngine({ reply });
    await engine.run('total the invoices');
    const refused = await dreamOf(engine, { policy: 'supervised', approvals: denyAll });
    expect(refused.status).toBe('rejected');
    expect(lessonRequests(engine)).toHaveLength(0);
    const asked = engine.runtime.store.runs.events(refused.runId ?? '').filter((event) => event.type === 'approval.requested');
    expect(asked).toMatchObject([{ kind: 'model_call', action: { purpose: 'lessons' } }]);

    const approved = await dreamOf(engine, { policy: 'supervised', approvals: approveAll });
    expect(approved.status).toBe('completed');
    expect(modelCalls(engine, approved.runId).filter((call) => call.purpose === 'lessons')).toEqual([{ purpose: 'lessons', allowed_by: 'approval' }]);
  });

  it('is not resumed', async () => {
    const engine = await startEngine({ reply });
    await engine.run('total the invoices');
    const refused = await dreamOf(engine, { policy: 'supervised', approvals: denyAll });
    await expect(engine.resume(refused.runId ?? '')).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringMatching(/is a dream/) });
  });
});
