import { describe, expect, it, vi } from 'vitest';
import { AgentBus } from '../../../src/core/bus/agent-bus';
import { EventBus } from '../../../src/core/events/event-bus';
import { RunEventLog } from '../../../src/core/events/run-event-log';
import { ArchonStore } from '../../../src/core/store/archon-store';
import type { ArchonEvent } from '../../../src/shared/schemas/events';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();

function setUp() {
  const store = ArchonStore.open(tempDir());
  store.db.prepare("INSERT INTO runs (id, goal, status, policy, created_at, updated_at) VALUES ('r', 'g', 'running', 'balanced', 'now', 'now')").run();
  const events = new EventBus();
  const log = new RunEventLog(store, events);
  const bus = new AgentBus(store.runs.busMessages, log);
  const storedIds = () => store.runs.busMessages.list('r').map((message) => message.envelope.id);
  return { store, events, log, bus, storedIds };
}

describe('AgentBus', () => {
  it('stores each envelope before it is announced as bus.message, in the store order', async () => {
    const { store, events, bus, storedIds } = setUp();
    const heard: { event: ArchonEvent; storedBefore: boolean }[] = [];
    events.subscribe((event) => {
      if (event.type === 'bus.message') heard.push({ event, storedBefore: storedIds().includes(event.id) });
    });

    const task = bus.publish('r', { from: 'coordinator', to: 'executor:s1', kind: 'task', body: 'do s1' });
    const result = bus.publish('r', { from: 'executor:s1', to: 'coordinator', kind: 'result', body: 'done', correlationId: task.id });
    await new Promise((resolve) => setImmediate(resolve));

    expect(heard.map(({ event }) => event.type === 'bus.message' && event.id)).toEqual(storedIds());
    expect(heard.every((item) => item.storedBefore)).toBe(true);
    expect(task).toMatchObject({ topic: 'agent:executor:s1', correlationId: task.id });
    expect(result).toMatchObject({ topic: 'agent:coordinator', correlationId: task.id });
    store.close();
  });

  it("finds an agent's last task, open or answered, from this process or an earlier one; an open one without reading the store", () => {
    const { store, log, bus } = setUp();
    const reads = vi.spyOn(store.runs.busMessages, 'lastTo');
    const first = bus.publish('r', { from: 'coordinator', to: 'step:a', kind: 'task', body: 'do a' });
    const second = bus.publish('r', { from: 'coordinator', to: 'step:a', kind: 'task', body: 'do a again' });
    expect(bus.lastTask('r', 'step:a')?.id).toBe(second.id);
    expect(reads).not.toHaveBeenCalled();

    bus.publish('r', { from: 'step:a', to: 'coordinator', kind: 'result', body: 'stale', correlationId: first.id });
    expect(bus.lastTask('r', 'step:a')?.id).toBe(second.id);
    bus.publish('r', { from: 'step:a', to: 'coordinator', kind: 'result', body: 'done', correlationId: second.id });
    expect(bus.lastTask('r', 'step:a')?.id).toBe(second.id);
    expect(reads).toHaveBeenCalledTimes(1);

    expect(new AgentBus(store.runs.busMessages, log).lastTask('r', 'step:a')?.id).toBe(second.id);
    expect(bus.lastTask('r', 'step:b')).toBeNull();
    store.close();
  });

  it('numbers messages per topic', () => {
    const { store, bus } = setUp();
    bus.publish('r', { from: 'coordinator', to: 'planner', kind: 'task', body: 'plan' });
    bus.publish('r', { from: 'coordinator', to: 'executor:a', kind: 'task', body: 'a' });
    bus.publish('r', { from: 'coordinator', to: 'planner', kind: 'task', body: 'plan again' });
    expect(store.runs.busMessages.list('r').map((message) => [message.envelope.topic, message.topicSeq])).toEqual([
      ['agent:planner', 1],
      ['agent:executor:a', 1],
      ['agent:planner', 2],
    ]);
    store.close();
  });

  it('delivers to subscribers of the topic, of the kind and of broadcasts, in order, and a stop ends the wait', async () => {
    const { store, bus } = setUp();
    const planner = bus.subscribe('r', 'agent:planner');
    const critiques = bus.subscribe('r', 'type:critique');
    bus.publish('r', { from: 'coordinator', to: 'planner', kind: 'task', body: 'plan' });
    bus.publish('r', { from: 'critic', to: 'coordinator', kind: 'critique', body: 'fail' });
    bus.publish('r', { from: 'coordinator', to: 'all', kind: 'decision', body: 'stop', topic: 'broadcast' });
    const signal = new AbortController().signal;
    expect([await planner.next(signal), await planner.next(signal)].map((envelope) => envelope.body)).toEqual(['plan', 'stop']);
    expect([await critiques.next(signal), await critiques.next(signal)].map((envelope) => envelope.body)).toEqual(['fail', 'stop']);
    const stop = new AbortController();
    const waiting = planner.next(stop.signal);
    stop.abort(new Error('stopped'));
    await expect(waiting).rejects.toThrow('stopped');
    store.close();
  });

  it('keeps a bounded queue: a subscriber that falls behind reads the rest from the store, nothing lost or repeated', async () => {
    const { store, bus } = setUp();
    const inbox = bus.subscribe('r', 'agent:planner', { limit: 2 });
    for (let index = 0; index < 5; index++) bus.publish('r', { from: 'coordinator', to: 'planner', kind: 'task', body: String(index) });
    const signal = new AbortController().signal;
    const bodies: string[] = [];
    for (let index = 0; index < 5; index++) bodies.push((await inbox.next(signal)).body);
    expect(bodies).toEqual(['0', '1', '2', '3', '4']);
    inbox.close();
    await expect(inbox.next(signal)).rejects.toThrow(/closed/);
    store.close();
  });

  it('replays a topic from a given point (an agent that restarts)', async () => {
    const { store, bus } = setUp();
    bus.publish('r', { from: 'coordinator', to: 'planner', kind: 'task', body: 'first' });
    bus.publish('r', { from: 'coordinator', to: 'executor:a', kind: 'task', body: 'other' });
    const inbox = bus.subscribe('r', 'agent:planner', { afterSeq: 0 });
    bus.publish('r', { from: 'coordinator', to: 'planner', kind: 'task', body: 'second' });
    const signal = new AbortController().signal;
    expect([(await inbox.next(signal)).body, (await inbox.next(signal)).body]).toEqual(['first', 'second']);
    store.close();
  });
});
