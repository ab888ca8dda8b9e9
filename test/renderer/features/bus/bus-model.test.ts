import { describe, expect, it } from 'vitest';
import { agentNames, busChoices, busMessagesOf, filterMessages, messageSteps, planOf } from '../../../../src/renderer/src/features/bus/bus-model';
import { CHILD, PARENT, PARENT_PLAN, parentEvents } from './subagent-run';

describe('the bus model', () => {
  it('links a message to the step its sender or recipient is, a sub-agent to the step that started it, and run-level messages to none', () => {
    const steps = messageSteps(parentEvents());
    expect(Object.fromEntries(steps)).toEqual({ m3: 'gather', m4: 'gather', m5: 'research', m6: 'research', m8: 'report', m9: 'report' });
  });

  it('links an answer between run-level agents to the step of the task it answers (same correlation id)', () => {
    const events = parentEvents().map((event) => (event.type === 'bus.message' && event.id === 'm7' ? { ...event, correlationId: 'c2' } : event));
    expect(messageSteps(events).get('m7')).toBe('gather');
  });

  it('filters by an agent as sender or recipient and by topic, and offers every agent and topic once', () => {
    const messages = busMessagesOf(parentEvents());
    expect(filterMessages(messages, { agent: 'planner', topic: null }).map((message) => message.id)).toEqual(['m1', 'm2']);
    expect(filterMessages(messages, { agent: 'coordinator', topic: 'type:critique' }).map((message) => message.id)).toEqual(['m7']);
    expect(busChoices(messages).agents).toEqual(['coordinator', 'critic', 'executor:gather', 'executor:report', 'planner', `subagent:${CHILD.id}`]);
    expect(busChoices(messages).topics).toContain('type:critique');
  });

  it('names a sub-agent by the step that started it and its goal', () => {
    expect(Object.fromEntries(agentNames(parentEvents()))).toEqual({ [`subagent:${CHILD.id}`]: `Sub-agent for step research: ${CHILD.goal}` });
  });

  it('reads a plan out of a message body, and nothing out of other text', () => {
    expect(planOf(JSON.stringify({ goal: PARENT.goal, steps: PARENT_PLAN }))?.map((step) => step.id)).toEqual(['gather', 'research', 'report']);
    expect(planOf('A and B')).toBeNull();
    expect(planOf('{"goal": "g"}')).toBeNull();
  });
});
