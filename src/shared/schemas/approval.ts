import { z } from 'zod';
import { PlanStepSchema, RiskSchema } from './plan';
import { VerdictSchema } from './validation';

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
  'uncertain_repeat',
  'resume_run',
  /** Validation, repair and re-planning did not get a step through: the operator chooses what happens next. */
  'escalation',
  /** An MCP server asks the operator for information (elicitation): `edit` with the form's content accepts, `reject` declines. */
  'elicitation',
  /** The outcome check found success criteria unmet (or could not be sure of them): accepting ends the run `completed_with_gaps`. */
  'outcome',
]);
export type ApprovalKind = z.infer<typeof ApprovalKindSchema>;

/** A constraint the operator locks for the rest of the run, enforced in code. */
export const LockedConstraintSchema = z.object({ kind: z.literal('never_tool'), tool: z.string().min(1).max(64) });
export type LockedConstraint = z.infer<typeof LockedConstraintSchema>;

/**
 * What a person decided. `edit` carries the edited action (plan steps or tool arguments), which is
 * validated again; `reject` with `stop` ends the run; `lock` refuses the action and locks a constraint.
 */
export const ApprovalDecisionSchema = z.discriminatedUnion('verdict', [
  /** `scope: 'run_tool'` (tool calls only) also approves every later call of this tool in this run, unless the policy forbids it (see grantsForRun). */
  z.object({ verdict: z.literal('approve'), scope: z.literal('run_tool').optional() }),
  z.object({ verdict: z.literal('edit'), edited: z.unknown() }),
  z.object({ verdict: z.literal('reject'), feedback: z.string().max(4000), stop: z.boolean().optional() }),
  z.object({ verdict: z.literal('lock'), constraint: LockedConstraintSchema, feedback: z.string().max(4000).optional() }),
]);
export type ApprovalDecision = z.infer<typeof ApprovalDecisionSchema>;

export const ApprovalStatusSchema = z.enum(['pending', 'approved', 'edited', 'rejected', 'locked', 'expired', 'stopped']);
export type ApprovalStatus = z.infer<typeof ApprovalStatusSchema>;

/**
 * Why a call may have been steered by untrusted text (a possible prompt injection): the untrusted
 * sources the step read, and each reason — a secret it would carry out, a name taken from that text,
 * or a place it reaches that the operator's goal and plan do not name.
 */
export const PossibleInjectionSchema = z.object({
  sources: z.array(z.string().max(300)).max(10),
  reasons: z.array(z.object({ kind: z.enum(['secret', 'from_untrusted', 'outside_plan']), text: z.string().max(400) })).min(1).max(10),
});
export type PossibleInjection = z.infer<typeof PossibleInjectionSchema>;

/**
 * Who answered a request: a person (`operator`, through a `channel`), the rule the operator chose
 * (`--approve auto|deny`), the policy, a run grant, or no one in time (`expiry`).
 */
export const DecidedBySchema = z.enum(['operator', 'rule', 'policy', 'grant', 'expiry']);
export type DecidedBy = z.infer<typeof DecidedBySchema>;

/** Where a person answered: the desktop app, the terminal prompt, the page `archon serve` serves, or a desk through a Restate cluster (`archon approve` or the app, for a run a worker drives). */
export const OperatorChannelSchema = z.enum(['app', 'terminal', 'page', 'cluster']);
export type OperatorChannel = z.infer<typeof OperatorChannelSchema>;

/** Who decided, with the channel when a person did. */
export const DeciderSchema = z.object({ decidedBy: DecidedBySchema, channel: OperatorChannelSchema.optional() });
export type Decider = z.infer<typeof DeciderSchema>;

/** A dangerous part of a shell command: it deletes, writes outside the workspace, pipes into a shell, or raises privileges. */
export const CommandHazardSchema = z.object({ kind: z.enum(['deletion', 'outside_redirect', 'pipe_to_shell', 'sudo', 'network', 'runs_code', 'renames_commands', 'unreadable']), text: z.string() });
export type CommandHazard = z.infer<typeof CommandHazardSchema>;

/**
 * What a call will do, worked out by core before it asks (never by the UI): a file write's unified
 * diff against the current file (or that it creates one), a command's working folder and the
 * dangerous parts it contains.
 */
export const ApprovalPreviewSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('diff'), path: z.string(), diff: z.string(), truncated: z.boolean() }),
  z.object({ kind: z.literal('new_file'), path: z.string(), bytes: z.int().nonnegative() }),
  /** The current file cannot be shown as text (binary or too large): it is replaced as a whole. */
  z.object({ kind: z.literal('replaces'), path: z.string(), reason: z.string() }),
  z.object({ kind: z.literal('command'), cwd: z.string(), hazards: z.array(CommandHazardSchema) }),
]);
export type ApprovalPreview = z.infer<typeof ApprovalPreviewSchema>;

/** Why a person is asked, and what it costs: seed 000's explanation packet. */
export const ExplanationPacketSchema = z.object({
  summary: z.string().max(500),
  confidence: z.number().min(0).max(1).nullable(),
  risk: z.object({ level: RiskSchema, factors: z.array(z.string()) }),
  reversibility: z.enum(['none', 'reversible', 'irreversible', 'not_applicable']),
  cost: z.object({ tokensUsed: z.int().nonnegative(), tokensLeft: z.int().nullable(), estimatedUsd: z.number().nonnegative() }),
  /** The first (at most 10) steps that depend on this one; `downstreamCount` says how many there are in all. */
  downstream: z.array(z.string()),
  downstreamCount: z.int().nonnegative().optional(),
  alternatives: z.array(z.string()),
  preview: ApprovalPreviewSchema.optional(),
  /** A tool call that "approve all like this for this run" may cover (see grantsForRun); absent elsewhere. */
  grantable: z.boolean().optional(),
});
export type ExplanationPacket = z.infer<typeof ExplanationPacketSchema>;

/** A request as the UI shows it. */
export const ApprovalRequestSchema = z.object({
  id: z.string(),
  runId: z.string(),
  stepId: z.string().nullable(),
  kind: ApprovalKindSchema,
  summary: z.string(),
  action: z.unknown(),
  actionHash: z.string(),
  explanation: ExplanationPacketSchema,
  requestedAt: z.string(),
  expiresAt: z.string().nullable(),
});
export type ApprovalRequest = z.infer<typeof ApprovalRequestSchema>;

/**
 * The operator's answer to an `escalation`, carried as an `edit` decision's `edited` value:
 * run the step again, skip it (its dependants run without its result), replace it, or end the run.
 * `approve` means retry and `reject` means end.
 */
export const EscalationChoiceSchema = z.discriminatedUnion('choice', [
  z.object({ choice: z.literal('retry') }),
  z.object({ choice: z.literal('skip') }),
  z.object({ choice: z.literal('edit'), description: z.string().min(1).max(4000), expected_output: z.string().max(2000).optional() }),
  z.object({ choice: z.literal('end') }),
]);
export type EscalationChoice = z.infer<typeof EscalationChoiceSchema>;

export const ESCALATION_CHOICES = ['retry', 'skip', 'edit', 'end'] as const;

/** What an `escalation` request shows: the step, why recovery stopped, the failed attempts, the validators' verdicts and the gap trend. */
export const EscalationActionSchema = z.object({
  stepId: z.string(),
  description: z.string(),
  expected_output: z.string().nullable(),
  /** The step's failure, verbatim. */
  reason: z.string(),
  /** Why recovery handed the step to the operator. */
  why: z.string(),
  attempts: z.array(z.object({ stepId: z.string(), revision: z.int().nonnegative(), description: z.string(), reason: z.string() })),
  verdicts: z.array(z.object({ stepId: z.string(), verdict: VerdictSchema, gap: z.number().min(0).max(1), reasons: z.array(z.string()) })),
  gapTrend: z.array(z.number()),
  replans: z.int().nonnegative(),
  maxReplans: z.int().nonnegative(),
  choices: z.array(z.enum(ESCALATION_CHOICES)),
});
export type EscalationAction = z.infer<typeof EscalationActionSchema>;

/** What a revised plan's `plan` request shows: a diff against the running plan, and the whole revised plan. */
export const PlanRevisionActionSchema = z.object({
  revision: z.int().positive(),
  reason: z.string(),
  failedStepId: z.string(),
  replaced: z.array(z.string()),
  added: z.array(PlanStepSchema),
  steps: z.array(PlanStepSchema),
});
export type PlanRevisionAction = z.infer<typeof PlanRevisionActionSchema>;
