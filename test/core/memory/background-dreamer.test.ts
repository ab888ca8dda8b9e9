import { describe, expect, it } from 'vitest';
import { BackgroundDreamer } from '../../../src/core/memory/background-dreamer';
import { modelConnector } from '../../../src/core/model/connect';
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

function backgroundDreamer(engine: EngineHarness): BackgroundDreamer {
  const connect = modelConnector({});
  return new BackgroundDreamer({
    runtime: engine.runtime,
    connect: async (signal) => ({ model: (await connect({ modelUrl: engine.server.url, model: '' } as RunOptions, signal)).model, mode: 'native' }),
  });
}

describe("the app's automatic Dreamer", () => {
  it('dreams in the background after a run ends (Settings.autoDream on by default)', async () => {
    const engine = await startEngine({ reply });
    const run = await engine.run('total the invoices');
    const dreamer = backgroundDreamer(engine);
    dreamer.runEnded();
    await dreamer.settled();
    expect(engine.runtime.store.memory.list({ kind: 'lesson', limit: 5 })).toMatchObject([{ text: 'Totals first.', evidence: [run.runId] }]);
    await dreamer.close();
  });

  it('does nothing when Settings.autoDream is off', async () => {
    const engine = await startEngine({ reply });
    await engine.run('total the invoices');
    engine.runtime.store.updateSettings({ autoDream: false });
    const dreamer = backgroundDreamer(engine);
    dreamer.runEnded();
    await dreamer.settled();
    expect(engine.server.chatRequests.filter((request) => request.purpose === 'lessons')).toHaveLength(0);
    expect(engine.runtime.store.dreams.undreamt(new Set(['completed']), 5)).toHaveLength(1);
    await dreamer.close();
  });
});
