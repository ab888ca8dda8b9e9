import { z } from 'zod';
import { RunOptionsSchema, RunSummarySchema, ScheduleIdSchema } from './run';

/** The run options a schedule may set; the rest come from the Settings of the worker that runs it. */
export const ScheduledOptionsSchema = RunOptionsSchema.pick({
  modelUrl: true,
  model: true,
  policy: true,
  concurrency: true,
  maxTokens: true,
  maxCostUsd: true,
  maxIterations: true,
  maxPlanSteps: true,
  verification: true,
  acceptGaps: true,
  workspace: true,
  memory: true,
  embeddingModel: true,
}).partial();
export type ScheduledOptions = z.infer<typeof ScheduledOptionsSchema>;

/** Who answers a scheduled run's approvals: a rule (always yes, always no), or a person at a desk (`archon approve`). */
export const ScheduledApproveSchema = z.enum(['auto', 'deny', 'desk']);
export type ScheduledApprove = z.infer<typeof ScheduledApproveSchema>;

/**
 * A goal run on a cron schedule by the workers of a Restate cluster, nobody at a terminal: its
 * approvals are answered by a rule or wait for a desk, and each run is held to its own caps.
 */
export const ScheduleSchema = z.object({
  goal: z.string().min(1).max(20_000),
  cron: z.string().min(1).max(200),
  approve: ScheduledApproveSchema,
  options: ScheduledOptionsSchema,
});
export type Schedule = z.infer<typeof ScheduleSchema>;

/** What the cluster keeps of a schedule: the schedule and its next firing. */
export const ScheduleStateSchema = z.object({ id: ScheduleIdSchema, schedule: ScheduleSchema, next: z.iso.datetime() });
export type ScheduleState = z.infer<typeof ScheduleStateSchema>;

/** A run in the inbox: one a schedule started, which ended, or waits for a person's answer (`waiting`). */
export const InboxItemSchema = z.object({ run: RunSummarySchema, scheduleId: ScheduleIdSchema, firedAt: z.iso.datetime(), waiting: z.boolean() });
export type InboxItem = z.infer<typeof InboxItemSchema>;
