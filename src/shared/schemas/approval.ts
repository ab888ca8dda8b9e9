import { z } from 'zod';

/** The checkpoints at which a person may be asked. */
export const ApprovalKindSchema = z.enum([
  'plan',
  'model_call',
  'tool_call',
  'step_result',
  'subagent_spawn',
  'critical_decision',
  'final_answer',
  'budget_raise',
  'resume_side_effect',
]);
export type ApprovalKind = z.infer<typeof ApprovalKindSchema>;

export const ApprovalDecisionSchema = z.discriminatedUnion('verdict', [
  z.object({ verdict: z.literal('approve') }),
  z.object({ verdict: z.literal('reject'), feedback: z.string().max(4000) }),
]);
export type ApprovalDecision = z.infer<typeof ApprovalDecisionSchema>;
