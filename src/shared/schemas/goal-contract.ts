import { z } from 'zod';

/** Who stated a criterion: read from the goal's own words, proposed by the model, or written by the operator. */
export const CriterionSourceSchema = z.enum(['goal', 'model', 'operator']);
export type CriterionSource = z.infer<typeof CriterionSourceSchema>;

/** The forms a final answer can be required to take, each checked by parsing it. */
export const AnswerFormatSchema = z.enum(['number', 'json']);
export type AnswerFormat = z.infer<typeof AnswerFormatSchema>;

const criterion = { id: z.string().min(1).max(16), text: z.string().min(1).max(500), source: CriterionSourceSchema };

/**
 * One thing that must hold for the goal to be done. Every kind but `judged` is checked against what the
 * run recorded, deterministically; `judged` ones go to the outcome check's one critic call.
 */
export const CriterionSchema = z.discriminatedUnion('kind', [
  /** A file the run must write (create or change), workspace-relative. */
  z.object({ ...criterion, kind: z.literal('file_written'), path: z.string().min(1).max(500) }),
  /** A command the run must have run with exit code 0. */
  z.object({ ...criterion, kind: z.literal('command_succeeds'), command: z.string().min(1).max(1000) }),
  /** The form the final answer must have, checked by parsing it. */
  z.object({ ...criterion, kind: z.literal('answer_format'), format: AnswerFormatSchema }),
  /** A value or fact the final answer must state. */
  z.object({ ...criterion, kind: z.literal('answer_mentions'), value: z.string().min(1).max(500) }),
  /** Anything else, judged by the critic against the run's evidence. */
  z.object({ ...criterion, kind: z.literal('judged') }),
]);
export type Criterion = z.infer<typeof CriterionSchema>;
export type CriterionKind = Criterion['kind'];

export const MAX_CRITERIA = 20;
const items = z.array(z.string().min(1).max(500)).max(20);

/** The goal as a contract, stated before planning: what "done" means, checked when the run ends. */
export const GoalContractSchema = z.object({
  /** The goal restated. */
  goal: z.string().min(1).max(4000),
  criteria: z
    .array(CriterionSchema)
    .max(MAX_CRITERIA)
    .refine((criteria) => new Set(criteria.map((criterion) => criterion.id)).size === criteria.length, { message: 'Each criterion needs an id of its own.' }),
  /** What the run hands over: files, an answer. */
  deliverables: items,
  /** What the run must not do or must keep to. */
  constraints: items,
  outOfScope: items,
});
export type GoalContract = z.infer<typeof GoalContractSchema>;

/** Whether one criterion held when the run ended, and what shows it. `met: null`: it could not be judged. */
export const CriterionOutcomeSchema = z.object({
  id: z.string().min(1).max(16),
  met: z.boolean().nullable(),
  /** What the judgement rests on: a file written by a call, a command's exit code, a step's result. */
  evidence: z.array(z.string().max(1000)).max(20),
  detail: z.string().max(2000).nullable(),
});
export type CriterionOutcome = z.infer<typeof CriterionOutcomeSchema>;

/** What an `outcome` approval puts to the operator: the gaps (none when the check was only unsure), each criterion's outcome, the contract and the critic's confidence. */
export const OutcomeActionSchema = z.object({
  gaps: z.array(z.string()),
  criteria: z.array(CriterionOutcomeSchema),
  contract: GoalContractSchema,
  confidence: z.number().min(0).max(1).nullable(),
});
export type OutcomeAction = z.infer<typeof OutcomeActionSchema>;
