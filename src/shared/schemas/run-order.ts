import { z } from 'zod';
import { RunOptionsSchema, RunStatusSchema, RunSummarySchema, ScheduleIdSchema, type RunStatus } from './run';

/** The run options an order to a Restate cluster may set; the rest come from the Settings of the worker that drives the run. */
export const RunOrderOptionsSchema = RunOptionsSchema.pick({
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
export type RunOrderOptions = z.infer<typeof RunOrderOptionsSchema>;

/** Who answers the approvals of a run a worker drives: a rule (always yes, always no), or a person at a desk (`archon approve`). */
export const RunOrderApproveSchema = z.enum(['auto', 'deny', 'desk']);
export type RunOrderApprove = z.infer<typeof RunOrderApproveSchema>;

/**
 * A goal a worker of a Restate cluster drives, nobody at a terminal (`run --detach`, or each firing of
 * a schedule): its approvals are answered by a rule or wait for a desk, and the run is held to its own caps.
 */
export const RunOrderSchema = z.object({
  goal: z.string().min(1).max(20_000),
  approve: RunOrderApproveSchema,
  options: RunOrderOptionsSchema,
});
export type RunOrder = z.infer<typeof RunOrderSchema>;

/** A run order on a cron schedule. */
export const ScheduleSchema = RunOrderSchema.extend({ cron: z.string().min(1).max(200) });
export type Schedule = z.infer<typeof ScheduleSchema>;

/** A firing that started no run, as its schedule's previous run was still going: the time it named, and that run. */
export const SkippedFiringSchema = z.object({ firedAt: z.iso.datetime(), runId: z.string() });
export type SkippedFiring = z.infer<typeof SkippedFiringSchema>;

/** What the cluster keeps of a schedule: the schedule, its next firing, and the last firing it skipped (null when none). */
export const ScheduleStateSchema = z.object({ id: ScheduleIdSchema, schedule: ScheduleSchema, next: z.iso.datetime(), lastSkipped: SkippedFiringSchema.nullable().default(null) });
export type ScheduleState = z.infer<typeof ScheduleStateSchema>;

/** A run in the inbox: one a worker drove (a schedule's, or one sent with `--detach`), which ended or waits for a person's answer (`waiting`). */
export const InboxItemSchema = z.object({ run: RunSummarySchema, scheduleId: ScheduleIdSchema.nullable(), firedAt: z.iso.datetime().nullable(), waiting: z.boolean() });
export type InboxItem = z.infer<typeof InboxItemSchema>;

/**
 * A run the cluster's workers drive or drove, as any desk sees it from the cluster: under way (or
 * waiting for a worker), ended with its status, or given up with why (its drive refused or failed
 * past its retries, or ended by the cluster's emergency stop).
 */
export const ClusterRunSchema = z.object({
  runId: z.string(),
  goal: z.string(),
  scheduleId: ScheduleIdSchema.nullable(),
  firedAt: z.iso.datetime().nullable(),
  state: z.enum(['under_way', 'ended', 'given_up']),
  status: RunStatusSchema.nullable(),
  problem: z.string().nullable(),
});
export type ClusterRun = z.infer<typeof ClusterRunSchema>;

/** How a run on the cluster stands, in a word or two; `statusText` words an ended run's status. */
export function clusterRunStanding(run: ClusterRun, statusText: (status: RunStatus) => string = String): string {
  if (run.state === 'ended') return run.status ? statusText(run.status) : 'ended';
  return run.state === 'given_up' ? 'given up' : 'under way';
}
