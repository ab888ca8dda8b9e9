import type { RunEvent } from '../../../../shared/schemas/events';
import { PlanSchema, type PlanStep } from '../../../../shared/schemas/plan';

export type BusMessage = Extract<RunEvent, { type: 'bus.message' }>;

/** The agent ids that are not a step: the run itself, its planner and critic, a person. */
const RUN_AGENTS = new Set(['coordinator', 'planner', 'critic', 'operator']);

export function busMessagesOf(events: readonly RunEvent[]): BusMessage[] {
  return events.filter((event): event is BusMessage => event.type === 'bus.message');
}

/** The step an agent id stands for: `<role>:<stepId>` is that step, `subagent:<childRunId>` the step that started the child run. */
function stepOfAgent(agent: string, subagentSteps: ReadonlyMap<string, string>): string | null {
  if (RUN_AGENTS.has(agent)) return null;
  const colon = agent.indexOf(':');
  if (colon < 0) return null;
  const [kind, rest] = [agent.slice(0, colon), agent.slice(colon + 1)];
  return kind === 'subagent' ? (subagentSteps.get(rest) ?? null) : rest;
}

/**
 * The step each message is about, by message id: the step its sender or recipient is, else the step of the
 * message it answers (same correlation id); none for a message between run-level agents only.
 */
export function messageSteps(events: readonly RunEvent[]): Map<string, string> {
  const subagentSteps = new Map(events.flatMap((event) => (event.type === 'subagent.started' ? [[event.childRunId, event.stepId] as const] : [])));
  const messages = busMessagesOf(events);
  const direct = new Map<string, string>();
  const byCorrelation = new Map<string, string>();
  for (const message of messages) {
    const step = stepOfAgent(message.to, subagentSteps) ?? stepOfAgent(message.from, subagentSteps);
    if (step === null) continue;
    direct.set(message.id, step);
    if (!byCorrelation.has(message.correlationId)) byCorrelation.set(message.correlationId, step);
  }
  const steps = new Map<string, string>();
  for (const message of messages) {
    const step = direct.get(message.id) ?? byCorrelation.get(message.correlationId);
    if (step !== undefined) steps.set(message.id, step);
  }
  return steps;
}

export interface BusFilter {
  agent: string | null;
  topic: string | null;
}

/** The messages an agent sent or received, on a topic; a null field does not filter. */
export function filterMessages(messages: readonly BusMessage[], { agent, topic }: BusFilter): BusMessage[] {
  return messages.filter((message) => (agent === null || message.from === agent || message.to === agent) && (topic === null || message.topic === topic));
}

/** Every agent and every topic the messages name, sorted, for the filters' choices. */
export function busChoices(messages: readonly BusMessage[]): { agents: string[]; topics: string[] } {
  return {
    agents: [...new Set(messages.flatMap((message) => [message.from, message.to]))].sort(),
    topics: [...new Set(messages.map((message) => message.topic))].sort(),
  };
}

/** How the app names an agent: a sub-agent by the step that started it and its goal, every other agent by its id. */
export function agentNames(events: readonly RunEvent[]): Map<string, string> {
  return new Map(events.flatMap((event) => (event.type === 'subagent.started' ? [[`subagent:${event.childRunId}`, `Sub-agent for step ${event.stepId}: ${event.goal}`] as const] : [])));
}

/** The steps of a plan a message carries (the planner's answer is the plan as JSON), else null. */
export function planOf(body: string): PlanStep[] | null {
  try {
    const parsed = PlanSchema.safeParse(JSON.parse(body));
    return parsed.success ? parsed.data.steps : null;
  } catch {
    return null;
  }
}
