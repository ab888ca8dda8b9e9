import { describe, expect, it } from 'vitest';
import { planReply, requestText, stepIdOf, type RecordedRequest, type ScriptedReply } from '../../kit/scripted-model-server';
import { useEngine } from '../../support/engine';
import { useModelServers } from '../../support/model-servers';

const startEngine = useEngine();
const modelServer = useModelServers();

/** Two steps: `count` finds the number of crates, `report` (after it) reports on the crates. */
function cratesScript(onStep: (request: RecordedRequest) => ScriptedReply | null = () => null): (request: RecordedRequest) => ScriptedReply {
  return (request) => {
    if (request.purpose === 'plan') return planReply([{ id: 'count', description: 'Count the crates in the warehouse' }, { id: 'report', description: 'Report the crates counted in the warehouse', dependencies: ['count'] }]);
    if (request.purpose === 'final') return { content: 'There are 412 crates.' };
    return onStep(request) ?? { content: stepIdOf(request) === 'count' ? 'The warehouse holds 412 crates.' : 'Reported: 412 crates.' };
  };
}

const relevantMemory = (request: RecordedRequest | undefined) => /Relevant memory[^]*?\n\n/.exec(requestText(request as RecordedRequest))?.[0] ?? '';

describe("a run's long-term memory", () => {
  it('keeps one episode a run: a stopped run resumed to its end replaces the episode its stop left', async () => {
    const controller = new AbortController();
    let stopOnce = true;
    const engine = await startEngine(
      {
        reply: cratesScript((request) => {
          if (stepIdOf(request) !== 'report' || !stopOnce) return null;
          stopOnce = false;
          controller.abort();
          return { content: 'too late', delayMs: 200 };
        }),
      },
      { memory: true },
    );
    const first = await engine.run('Count the crates', {}, controller.signal);
    expect(first.status).toBe('stopped');
    expect(engine.runtime.store.memory.list({ kind: 'episode', limit: 10 }).map((item) => item.text.split('\n')[0])).toEqual([`Run ${first.runId} ended stopped.`]);
    expect((await engine.resume(first.runId)).status).toBe('completed');
    const episodes = engine.runtime.store.memory.list({ kind: 'episode', limit: 10 });
    expect(episodes.map((item) => item.text.split('\n')[0])).toEqual([`Run ${first.runId} ended completed.`]);
  });

  it("gives planning the most recent items when nothing matches, a step nothing unrelated, and no step its own run's facts", async () => {
    const engine = await startEngine({ reply: cratesScript() }, { memory: true });
    const unrelated = engine.runtime.store.memory.add({ kind: 'fact', text: 'Zebras migrate north in spring.' });
    const result = await engine.run('Count the crates');
    expect(result.status).toBe('completed');
    const requests = engine.server.chatRequests;
    expect(relevantMemory(requests.find((request) => request.purpose === 'plan'))).toContain(unrelated.text);
    const steps = requests.filter((request) => request.purpose === 'step');
    expect(steps.map(stepIdOf)).toEqual(['count', 'report']);
    // `report` shares words with `count`'s stored result, which reaches it as a dependency's result, never as recalled memory.
    for (const step of steps) expect(relevantMemory(step)).toBe('');
    expect(requestText(steps[1] as RecordedRequest)).toContain('The warehouse holds 412 crates.');
    expect(engine.runtime.store.memory.list({ kind: 'fact', limit: 10 }).some((item) => item.source?.runId === result.runId && item.text.includes('412 crates'))).toBe(true);
    expect(engine.events.filter((event) => event.type === 'memory.recalled').every((event) => event.type === 'memory.recalled' && event.stepId === undefined)).toBe(true);
  });

  it("gives the planner role's server the Relevant memory section when planning runs there", async () => {
    const planner = await modelServer({ reply: cratesScript() });
    const engine = await startEngine({ reply: cratesScript() }, { memory: true });
    const fact = engine.runtime.store.memory.add({ kind: 'fact', text: 'The warehouse crates are counted on Mondays.' });
    const result = await engine.run('Count the crates', { roles: { planner: { description: '', tools: 'all', model: { url: planner.url, name: 'scripted-model' } } } });
    expect(result.status).toBe('completed');
    expect(engine.server.chatRequests.some((request) => request.purpose === 'plan')).toBe(false);
    expect(relevantMemory(planner.chatRequests.find((request) => request.purpose === 'plan'))).toContain(fact.text);
  });

  it('completes a run whose memory store is broken (its FTS table gone): nothing is recalled or kept, nothing fails', async () => {
    const engine = await startEngine({ reply: cratesScript() }, { memory: true });
    engine.runtime.store.memory.add({ kind: 'fact', text: 'The warehouse crates are counted on Mondays.' });
    engine.runtime.store.db.exec('DROP TABLE memory_fts');
    const result = await engine.run('Count the crates');
    expect(result).toMatchObject({ status: 'completed', answer: 'There are 412 crates.' });
    expect(engine.events.some((event) => event.type === 'memory.recalled')).toBe(false);
    expect(engine.runtime.store.memory.count()).toBe(1);
  });
});
