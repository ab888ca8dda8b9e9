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

/** One rival step's ballot in a conflict vote: its factors and their weighted score. */
export const ConflictBallotSchema = z.object({
  stepId: z.string(),
  agent: z.string(),
  factors: z.object({ domain: z.number(), confidence: z.number(), history: z.number() }),
  score: z.number(),
});
export type ConflictBallot = z.infer<typeof ConflictBallotSchema>;

/**
 * A conflict the coordinator settles on the bus, as JSON: the body of its escalation to the operator,
 * and of its broadcast decision (which names the `winner`). The operator's answer to an escalation is
 * `conflictAnswerBody`.
 */
export const SettledConflictSchema = z.object({
  question: z.string(),
  reason: z.string(),
  /** The weighted vote; `escalate`: its winner scored under the threshold, so the operator decides. */
  vote: z.object({ ballots: z.array(ConflictBallotSchema), winner: ConflictBallotSchema, escalate: z.boolean() }),
  winner: z.string().optional(),
});
export type SettledConflict = z.infer<typeof SettledConflictSchema>;

export function settledConflictBody(conflict: SettledConflict): string {
  return JSON.stringify(SettledConflictSchema.parse(conflict));
}

/** The conflict a bus message body holds; null when it holds none. */
export function parseSettledConflict(body: string): SettledConflict | null {
  try {
    const parsed = SettledConflictSchema.safeParse(JSON.parse(body));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

const CONFLICT_ANSWER = /^winner: (.+)$/;

/** The operator's answer to an escalated conflict: the step whose answer stands. */
export function conflictAnswerBody(winner: string): string {
  return `winner: ${winner}`;
}

/** The winner an operator's answer names; undefined when the body is no such answer. */
export function conflictAnswerWinner(body: string): string | undefined {
  return CONFLICT_ANSWER.exec(body)?.[1];
}
