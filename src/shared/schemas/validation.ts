import { z } from 'zod';

export const VerdictSchema = z.enum(['pass', 'fail']);
export type Verdict = z.infer<typeof VerdictSchema>;

/** One deterministic check of a result: its name, whether it held, and why not. */
export const ValidationCheckSchema = z.object({ name: z.string(), passed: z.boolean(), detail: z.string().optional() });
export type ValidationCheck = z.infer<typeof ValidationCheckSchema>;

/** What the critic submits through the tool `submit_verdict` (see docs/model-protocol.md). */
export const CriticVerdictSchema = z.object({
  verdict: VerdictSchema,
  gap: z.number().min(0).max(1),
  reason: z.string().min(1).max(4000),
  confidence: z.number().min(0).max(1).optional(),
});
export type CriticVerdict = z.infer<typeof CriticVerdictSchema>;

/** The Meta-Validator's verdict on a plan, before anyone sees it. */
export interface PlanVerdict {
  verdict: Verdict;
  /** Share of the checks that failed, or the critic's gap when that is larger. */
  gap: number;
  /** The critic's confidence in its verdict; null when no critic judged the plan. */
  confidence: number | null;
  reasons: string[];
  checks: ValidationCheck[];
}
