import { z } from 'zod';

/**
 * What travels between agents. Agent ids: `coordinator` (the run itself), `planner`, `critic`,
 * `executor:<stepId>` (a step, or `<role>:<stepId>` for a specialist), `subagent:<childRunId>`,
 * `operator` (escalations answered by a person); `broadcast` as a recipient means every agent (topic `broadcast`).
 */
export const BusMessageKindSchema = z.enum(['task', 'result', 'critique', 'escalation', 'decision']);
export type BusMessageKind = z.infer<typeof BusMessageKindSchema>;

/** Topics: `agent:<id>` (one recipient), `type:<kind>`, or `broadcast`; messages are ordered per topic. */
export const BusTopicSchema = z.string().regex(/^(agent:.+|type:[a-z_]+|broadcast)$/);

/** One message on the bus: stored before it is delivered, emitted as `bus.message`. `correlationId` links a task to its result. */
export const BusEnvelopeSchema = z.object({
  id: z.string().min(1).max(64),
  correlationId: z.string().min(1).max(64),
  from: z.string().min(1).max(200),
  to: z.string().min(1).max(200),
  topic: BusTopicSchema,
  kind: BusMessageKindSchema,
  body: z.string().max(20_000),
  ts: z.string(),
});
export type BusEnvelope = z.infer<typeof BusEnvelopeSchema>;

/** The agent a plan step is: `executor:<stepId>`, or `<role>:<stepId>` for a specialist. */
export function stepAgentId(step: { id: string; role?: string }): string {
  return `${step.role ?? 'executor'}:${step.id}`;
}

/** An effector is an agent that acts (a step's executor or specialist); effectors never address each other (seed 002). */
export function isEffectorId(agentId: string): boolean {
  const colon = agentId.indexOf(':');
  return colon > 0 && agentId.slice(0, colon) !== 'subagent';
}
