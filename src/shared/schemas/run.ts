import { z } from 'zod';
import { MAX_SUBAGENT_DEPTH, RoleNameSchema, StoredRoleSchema } from './roles';

export const PolicySchema = z.enum(['supervised', 'strict', 'balanced', 'permissive']);
export type Policy = z.infer<typeof PolicySchema>;

export const RunStatusSchema = z.enum([
  'pending',
  'planning',
  'running',
  'awaiting_approval',
  'completed',
  /** Completed, but the outcome check found success criteria unmet and the operator accepted them (exit 7). */
  'completed_with_gaps',
  'failed',
  'stopped',
  'rejected',
  'budget_exhausted',
  /** Waiting for the model server or the disk to come back; `archon resume` continues it. */
  'paused',
]);
export type RunStatus = z.infer<typeof RunStatusSchema>;
/** A run in one of these is over (for now: a paused or stopped one may be resumed). */
export const ENDED_RUN_STATUSES: ReadonlySet<RunStatus> = new Set(['completed', 'completed_with_gaps', 'failed', 'stopped', 'rejected', 'budget_exhausted', 'paused']);

export const StepStatusSchema = z.enum([
  'pending',
  'running',
  'awaiting_approval',
  'completed',
  'failed',
  'skipped',
  'stopped',
]);
export type StepStatus = z.infer<typeof StepStatusSchema>;

/** How a step's result is checked: not at all, by deterministic checks, or by the checks and a critic model call. */
export const VerificationSchema = z.enum(['off', 'checks', 'critic']);
export type Verification = z.infer<typeof VerificationSchema>;

export const RunIdSchema = z.string().min(1).max(64);

/** What a model costs, in USD per million input and output tokens. */
export const ModelPriceSchema = z.object({ inputPerMillion: z.number().nonnegative().max(10_000), outputPerMillion: z.number().nonnegative().max(10_000) }).strict();
export type ModelPrice = z.infer<typeof ModelPriceSchema>;
/** What the operator asked of one run (written to the store; the process driving the run acts on it): who asked, so the run's end names them. */
/** What the operator asks of one running run: end it `stopped`, or `paused` (resume continues it exactly, the journal keeps completed work). */
export const RunControlActionSchema = z.enum(['stop', 'pause']);
export type RunControlAction = z.infer<typeof RunControlActionSchema>;
export const RunControlSchema = z.object({ action: RunControlActionSchema, by: z.string().min(1).max(200) });
export type RunControl = z.infer<typeof RunControlSchema>;

/** What a run is: a goal carried out by agents, or a dream (the Dreamer learning lessons from finished runs). */
export const RunKindSchema = z.enum(['goal', 'dream']);
export type RunKind = z.infer<typeof RunKindSchema>;

export const RunSummarySchema = z.object({
  id: RunIdSchema,
  goal: z.string(),
  status: RunStatusSchema,
  policy: PolicySchema,
  createdAt: z.string(),
  updatedAt: z.string(),
  answer: z.string().nullable(),
  error: z.string().nullable(),
  tokens: z.int().nonnegative(),
  costUsd: z.number().nonnegative(),
  /** False when nobody knew the model's price: `costUsd` is then not a cost. Absent for runs from before prices were kept. */
  priceKnown: z.boolean().optional(),
  /** A sub-agent's run: the run it works for. */
  parentRunId: RunIdSchema.nullable().optional(),
  /** A follow-up's run: the finished run it continues. */
  followUpOf: RunIdSchema.optional(),
  /** Not ended, yet no Archon process drives it or the run it works for (its host stopped): Resume takes it up. */
  interrupted: z.boolean().optional(),
  /** Absent for runs listed before runs had kinds: a goal. */
  kind: RunKindSchema.optional(),
});
export type RunSummary = z.infer<typeof RunSummarySchema>;

export const ApproveModeSchema = z.enum(['prompt', 'auto', 'deny']);

/** A schedule's name: what `archon schedule rm` takes, and its key on the cluster. */
export const ScheduleIdSchema = z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'up to 64 letters, digits, dots, dashes or underscores');
export type ApproveMode = z.infer<typeof ApproveModeSchema>;

/** A Restate cluster whose workers run built-in tool calls: its ingress, its admin API, and the file of the secret each call is signed with. */
export const ClusterSettingSchema = z.object({ ingress: z.url({ protocol: /^https?$/ }), admin: z.url({ protocol: /^https?$/ }), secretFile: z.string().min(1).max(4096) });
export type ClusterSetting = z.infer<typeof ClusterSettingSchema>;

/** How a run is carried out; stored with the run so `archon resume` continues with the same settings. */
export const RunOptionsSchema = z.object({
  modelUrl: z.url({ protocol: /^https?$/ }),
  model: z.string().max(200),
  policy: PolicySchema,
  concurrency: z.int().min(1).max(64).nullable(),
  maxTokens: z.int().positive().nullable(),
  maxCostUsd: z.number().positive().nullable(),
  workspace: z.string().min(1),
  maxIterations: z.int().min(1).max(50),
  verification: VerificationSchema.default('checks'),
  /** Tries to repair a step whose result failed validation before its subtree is re-planned. */
  repairBudget: z.int().min(0).max(10).default(2),
  /** Scoped re-plans per run before the operator is asked. */
  maxReplans: z.int().min(0).max(10).default(3),
  /** The model's price the run is charged at, settled when it starts (null: nobody knew it). */
  price: ModelPriceSchema.nullable().optional(),
  /** The finished run this one continues: its goal, plan and answer are in the new plan request. */
  followUpOf: z.string().min(1).max(64).optional(),
  /** Recall from and store to long-term memory (absent: yes; `--no-memory` turns it off for the run). */
  memory: z.boolean().optional(),
  /** The embedding model on the run's server for vector recall (null: lexical recall only). */
  embeddingModel: z.string().max(200).nullable().optional(),
  /** The role registry the run uses, keys left out (see schemas/roles.ts). */
  roles: z.record(RoleNameSchema, StoredRoleSchema).optional(),
  /** For a sub-agent's run: its parent run, the parent's step, and its depth (absent or 0: a top-level run; 1: its child). */
  parentRunId: RunIdSchema.optional(),
  parentStepId: z.string().min(1).max(64).optional(),
  depth: z.int().min(0).max(MAX_SUBAGENT_DEPTH).optional(),
  /** The operator's word, given before the run (`--accept-gaps`): success criteria the outcome check finds unmet end the run `completed_with_gaps` instead of asking. */
  acceptGaps: z.boolean().optional(),
  /** The most steps the run's plan may have (absent: 64). */
  maxPlanSteps: z.int().min(1).max(1000).optional(),
  /** The Restate cluster whose workers run the run's built-in tool calls, and the file of the secret each call is signed with (absent or null: this machine's tool processes). */
  cluster: ClusterSettingSchema.nullable().optional(),
  /** A run a worker of a Restate cluster drives: the schedule and firing that started it, or nulls for one sent with `--detach`. It lands in the inbox when it ends or waits. */
  dispatch: z.object({ scheduleId: ScheduleIdSchema.nullable(), firedAt: z.iso.datetime().nullable() }).optional(),
});
export type RunOptions = z.infer<typeof RunOptionsSchema>;

/** A run's workspace as it was confirmed when the run started: resume and undo act only on that folder. */
export const WorkspacePinSchema = z.object({ realPath: z.string().min(1), dev: z.string().min(1), ino: z.string().min(1) });
export type WorkspacePin = z.infer<typeof WorkspacePinSchema>;
