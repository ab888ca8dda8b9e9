import { describe, expect, it } from 'vitest';
import { approveAll } from '../../../src/core/approval/approval-channel';
import { BackgroundDreamer } from '../../../src/core/memory/background-dreamer';
import { modelConnector } from '../../../src/core/model/connect';
import { EmergencyStop } from '../../../src/core/stop/emergency-stop';
import type { RunOptions } from '../../../src/shared/schemas/run';
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

function backgroundDreamer(engine: EngineHarness, estop: EmergencyStop): BackgroundDreamer {
  const options: RunOptions = { modelUrl: engine.server.url, model: '', policy: 'balanced', concurrency: null, maxTokens: null, maxCostUsd: null, workspace: engine.workspace, maxIterations: 10, verification: 'checks', repairBudget: 2, maxReplans: 3 };
  return new BackgroundDreamer({ runtime: engine.runtime, estop, approvals: approveAll, connect: modelConnector({}), options: () => options });
}

const lessonRequests = (engine: EngineHarness) => engine.server.requests.filter((request) => request.purpose === 'lessons');
const dreams = (engine: EngineHarness) => engine.runtime.store.runs.listRuns(10).filter((run) => run.kind === 'dream');

describe("the app's automatic Dreamer", () => {
  it('dreams in the background after a run ends (Settings.autoDream on by default), as a run of kind dream', async () => {
    const engine = await startEngine({ reply });
    const run = await engine.run('total the invoices');
    const estop = new EmergencyStop(engine.runtime.store, engine.runtime.bus, engine.runtime.now);
    const dreamer = backgroundDreamer(engine, estop);
    dreamer.runEnded();
    await dreamer.settled();
    expect(engine.runtime.store.memory.list({ kind: 'lesson', limit: 5 })).toMatchObject([{ text: 'Totals first.', evidence: [run.runId] }]);
    expect(dreams(engine)).toMatchObject([{ kind: 'dream', status: 'completed' }]);
    await dreamer.close();
  });

  it('does nothing when Settings.autoDream is off', async () => {
    const engine = await startEngine({ reply });
    await engine.run('total the invoices');
    engine.runtime.store.updateSettings({ autoDream: false });
    const dreamer = backgroundDreamer(engine, new EmergencyStop(engine.runtime.store, engine.runtime.bus, engine.runtime.now));
    dreamer.runEnded();
    await dreamer.settled();
    expect(lessonRequests(engine)).toHaveLength(0);
    expect(engine.runtime.store.dreams.undreamt(new Set(['completed']), 5)).toHaveLength(1);
    await dreamer.close();
  });

  it('starts no dream while the emergency stop is latched: the model server receives nothing', async () => {
    const engine = await startEngine({ reply });
    await engine.run('total the invoices');
    const estop = new EmergencyStop(engine.runtime.store, engine.runtime.bus, engine.runtime.now);
    await estop.trigger('operator', 'stop everything');
    const before = engine.server.requests.length;
    const dreamer = backgroundDreamer(engine, estop);
    dreamer.runEnded();
    await dreamer.settled();
    expect(engine.server.requests.length).toBe(before);
    expect(dreams(engine)).toEqual([]);
    await dreamer.close();
  });

  it('the emergency stop pressed while the model is answering the lessons request ends the dream stopped, and the runs stay undreamt', async () => {
    const engine = await startEngine({ reply: (request) => (request.purpose === 'lessons' ? { hang: true } : reply(request)) });
    const run = await engine.run('total the invoices');
    const estop = new EmergencyStop(engine.runtime.store, engine.runtime.bus, engine.runtime.now);
    const dreamer = backgroundDreamer(engine, estop);
    dreamer.runEnded();
    await expect.poll(() => lessonRequests(engine).length).toBe(1);
    await estop.trigger('operator', 'stop the dream');
    await dreamer.settled();
    const [dream] = dreams(engine);
    expect(dream).toMatchObject({ kind: 'dream', status: 'stopped' });
    const events = engine.runtime.store.runs.events(dream?.id ?? '');
    expect(events.map((event) => event.type)).toEqual(expect.arrayContaining(['run.started', 'estop.triggered', 'run.stopped']));
    expect(events.find((event) => event.type === 'run.stopped')).toMatchObject({ kind: 'dream' });
    expect(engine.runtime.store.dreams.undreamt(new Set(['completed']), 5)).toEqual([run.runId]);
    await dreamer.close();
  });
});
