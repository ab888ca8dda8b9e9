import { describe, expect, it } from 'vitest';
import type { ArchonEvent } from '../../../src/shared/schemas/events';
import { planReply, stepIdOf, type RecordedRequest, type ScriptedReply } from '../../kit/scripted-model-server';
import { useEngine } from '../../support/engine';

const startEngine = useEngine();

/** Step `a` answers; step `b` only ever calls the calculator, so it runs out of turns and the run escalates. */
function reply(request: RecordedRequest): ScriptedReply {
  if (request.purpose === 'plan') return planReply([{ id: 'a', description: 'Say hello' }, { id: 'b', description: 'Keep calculating', dependencies: ['a'] }]);
  if (request.purpose === 'step' && stepIdOf(request) === 'b') return { toolCalls: [{ name: 'calculator', arguments: { expression: '1+1' } }] };
  return { content: 'hello' };
}

describe('hand-offs on the agent bus (scripted server, real openai client)', () => {
  it('publishes every hand-off, each stored before it is announced, tasks and answers correlated', async () => {
    const engine = await startEngine({ reply });
    const storedWhenHeard: boolean[] = [];
    engine.runtime.bus.subscribe((event: ArchonEvent) => {
      if (event.type !== 'bus.message') return;
      storedWhenHeard.push(engine.runtime.store.runs.busMessages.list(event.runId).some((message) => message.envelope.id === event.id));
    });

    const result = await engine.run('greet', { maxIterations: 1, maxReplans: 0 });
    expect(result.status).toBe('failed');

    const announced = engine.events.flatMap((event) => (event.type === 'bus.message' ? [event] : []));
    const stored = engine.runtime.store.runs.busMessages.list(result.runId);
    expect(announced.map((event) => event.id)).toEqual(stored.map((message) => message.envelope.id));
    expect(storedWhenHeard.length).toBe(stored.length);
    expect(storedWhenHeard.every(Boolean)).toBe(true);

    expect(stored.map(({ envelope }) => `${envelope.from} → ${envelope.to}: ${envelope.kind}`)).toEqual([
      'coordinator → planner: task',
      'planner → coordinator: result',
      'coordinator → executor:a: task',
      'critic → coordinator: critique',
      'executor:a → coordinator: result',
      'coordinator → executor:b: task',
      'executor:b → coordinator: result',
      'coordinator → operator: escalation',
      'operator → coordinator: decision',
    ]);
    const [planTask, plan, taskA, critique, resultA, taskB, resultB, escalation, decision] = stored.map((message) => message.envelope);
    expect(planTask?.body).toContain('Goal: greet');
    expect(JSON.parse(plan?.body ?? '')).toMatchObject({ steps: [{ id: 'a' }, { id: 'b' }] });
    expect(plan?.correlationId).toBe(planTask?.id);
    expect([critique?.correlationId, resultA?.correlationId]).toEqual([taskA?.id, taskA?.id]);
    expect(resultA?.body).toBe('hello');
    expect(resultB).toMatchObject({ correlationId: taskB?.id, body: expect.stringContaining('failed: iteration_cap') });
    expect(escalation?.body).toContain('Step b failed');
    expect(decision).toMatchObject({ correlationId: escalation?.id, body: expect.stringContaining('end') });
    // Per-topic order: the coordinator's inbox numbered 1, 2, 3… in publishing order.
    expect(stored.filter((message) => message.envelope.topic === 'agent:coordinator').map((message) => message.topicSeq)).toEqual([1, 2, 3, 4, 5]);
  });

  it('a resumed run reuses the task it left open instead of handing the same step over twice', async () => {
    const controller = new AbortController();
    let stopOnce = true;
    const engine = await startEngine({
      reply: (request) => {
        if (request.purpose === 'plan') return planReply([{ id: 'a', description: 'Say hello' }]);
        if (request.purpose === 'step' && stopOnce) {
          stopOnce = false;
          controller.abort();
          return { hang: true };
        }
        return { content: 'hello' };
      },
    });
    const first = await engine.run('greet', {}, controller.signal);
    expect(first.status).toBe('stopped');
    expect((await engine.resume(first.runId)).status).toBe('completed');
    const stored = engine.runtime.store.runs.busMessages.list(first.runId).map((message) => message.envelope);
    const tasks = stored.filter((envelope) => envelope.to === 'executor:a' && envelope.kind === 'task');
    expect(tasks).toHaveLength(1);
    expect(stored.filter((envelope) => envelope.from === 'executor:a' && envelope.kind === 'result').map((envelope) => envelope.correlationId)).toEqual([tasks[0]?.id]);
  });
});
