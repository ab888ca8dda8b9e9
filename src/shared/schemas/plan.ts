import { z } from 'zod';

export const RiskSchema = z.enum(['low', 'medium', 'high', 'critical']);
export type Risk = z.infer<typeof RiskSchema>;

/** One step of a plan, as the model submits it through `submit_plan` (see docs/model-protocol.md). */
export const PlanStepSchema = z.object({
  id: z.string().min(1).max(64),
  description: z.string().min(1).max(4000),
  dependencies: z.array(z.string().min(1).max(64)).max(64),
  expected_output: z.string().max(2000).optional(),
  tool: z.string().max(64).optional(),
  args: z.record(z.string(), z.unknown()).optional(),
  role: z.string().max(64).optional(),
  risk: RiskSchema.optional(),
  /** `subagent`: the step is a child run with its own plan for `goal` (the planner fills a missing description from it). */
  kind: z.enum(['task', 'subagent']).optional(),
  goal: z.string().min(1).max(4000).optional(),
}).refine((step) => step.kind !== 'subagent' || step.goal !== undefined, { message: 'A step of kind "subagent" needs a goal.', path: ['goal'] });
export type PlanStep = z.infer<typeof PlanStepSchema>;

export const PlanSchema = z.object({
  goal: z.string(),
  steps: z.array(PlanStepSchema).min(1),
});
export type Plan = z.infer<typeof PlanSchema>;
