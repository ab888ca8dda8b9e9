import { z } from 'zod';
import { RunEventSchema } from './events';
import { PlanStepSchema } from './plan';
import { RunSummarySchema, StepStatusSchema } from './run';

export const StepViewSchema = z.object({
  spec: PlanStepSchema,
  status: StepStatusSchema,
  result: z.string().nullable(),
  error: z.string().nullable(),
  /** The plan revision that added the step (0 or absent: the first plan). */
  revision: z.int().nonnegative().optional(),
  /** The revision of a scoped re-plan that replaced the step; it keeps its status and is no longer part of the plan. */
  replacedIn: z.int().positive().nullable().optional(),
  /** Skipped by the operator at an escalation; the steps after it ran without its result. */
  waived: z.boolean().optional(),
});
export type StepView = z.infer<typeof StepViewSchema>;

/** One run as the UI opens it: its summary, its steps, and its events so far (the trace). */
export const RunDetailSchema = z.object({
  run: RunSummarySchema,
  steps: z.array(StepViewSchema),
  events: z.array(RunEventSchema),
  active: z.boolean(),
});
export type RunDetail = z.infer<typeof RunDetailSchema>;

export const StartRunInputSchema = z
  .object({
    goal: z.string().trim().min(1).max(10_000),
    policy: z.enum(['supervised', 'strict', 'balanced', 'permissive']).optional(),
    modelUrl: z.url({ protocol: /^https?$/ }).optional(),
    model: z.string().max(200).optional(),
    maxTokens: z.int().positive().nullable().optional(),
    maxCostUsd: z.number().positive().nullable().optional(),
    concurrency: z.int().min(1).max(64).nullable().optional(),
    workspace: z.string().min(1).max(4096).optional(),
    followUpOf: z.string().min(1).max(64).optional(),
  })
  .strict();
export type StartRunInput = z.infer<typeof StartRunInputSchema>;
