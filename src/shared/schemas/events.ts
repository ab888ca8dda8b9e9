import { z } from 'zod';
import { CAP_NAMES } from '../budget-cap';
import { PossibleInjectionSchema, ApprovalDecisionSchema, ApprovalKindSchema, ApprovalStatusSchema, DecidedBySchema, ExplanationPacketSchema, LockedConstraintSchema, OperatorChannelSchema } from './approval';
import { EndpointProbeSchema } from './endpoint';
import { BusEnvelopeSchema } from './bus';
import { EstopStateSchema, EstopTriggerSchema } from './estop';
import { HostConfirmationSchema } from './host-confirmation';
import { MemoryIdSchema, RecalledMemorySchema } from './memory';
import { CriterionOutcomeSchema, GoalContractSchema } from './goal-contract';
import { PlanSchema } from './plan';
import { ValidationCheckSchema, VerdictSchema } from './validation';
import { PolicySchema, RunIdSchema, RunKindSchema } from './run';
import { ToolApprovalOverrideSchema } from './settings';
import { SideEffectsSchema, ToolResultPartSchema, ToolStatusSchema } from './tool';

const runEvent = <T extends string, S extends z.ZodRawShape>(type: T, shape: S) =>
  z.object({ type: z.literal(type), runId: RunIdSchema, seq: z.int().positive(), ts: z.string(), ...shape });

const stepShape = { stepId: z.string() };

/** Why a call did not run as asked (see `tool.refused`). */
export const ToolRefusalCodeSchema = z.enum(['unknown_tool', 'invalid_arguments', 'not_allowed_for_role', 'rejected', 'locked', 'outside_bounds', 'possible_injection']);
export type ToolRefusalCode = z.infer<typeof ToolRefusalCodeSchema>;
const toolShape = { stepId: z.string(), tool: z.string(), callId: z.string() };

/** Everything a run announces. `seq` is per run and strictly increasing; the event is stored before it goes out. */
export const RunEventSchema = z.discriminatedUnion('type', [
  /** A sub-agent's run names its parent run and the parent's step it answers for. */
  runEvent('run.started', {
    goal: z.string(),
    policy: PolicySchema,
    toolApproval: z.record(z.string(), ToolApprovalOverrideSchema),
    parentRunId: RunIdSchema.optional(),
    parentStepId: z.string().optional(),
    /** The run's cap on re-plans, for the auditor (absent in older runs). */
    maxReplans: z.int().nonnegative().optional(),
    /** `dream`: the Dreamer's run (absent: a goal); its end events say the same. */
    kind: RunKindSchema.optional(),
  }),
  runEvent('run.resumed', { completedSteps: z.array(z.string()), rerunSteps: z.array(z.string()).optional(), recoveringSteps: z.array(z.string()).optional() }),
  /** What the probe found about the model server, and why the run does not use streamed native tool calls when it does not. */
  runEvent('model.probed', EndpointProbeSchema.pick({ model: true, toolCalling: true, streaming: true, reason: true, contextLength: true, contextSource: true, parallelSlots: true }).shape),
  runEvent('model.completed', {
    stepId: z.string().nullable(),
    purpose: z.string(),
    /** What the model said (cut at 2,000 characters) and the tools it called. */
    content: z.string(),
    toolCalls: z.array(z.string()),
    promptTokens: z.int().nonnegative(),
    completionTokens: z.int().nonnegative(),
    attempts: z.int().positive(),
  }),
  /** The tool-call dialect the model writes in, when it is not native tool calls; read for the rest of the run. */
  runEvent('model.dialect_detected', { dialect: z.string() }),
  runEvent('model.attempt_failed', { stepId: z.string().nullable(), purpose: z.string(), attempt: z.int().positive(), error: z.string() }),
  runEvent('plan.ready', { plan: PlanSchema }),
  /** `role`: the role the step runs as; `roleTools`: the tools that role may use (what the auditor checks its calls against). */
  runEvent('step.started', { ...stepShape, role: z.string().optional(), roleTools: z.union([z.array(z.string()), z.literal('all')]).optional(), worker: z.string().max(64).optional() }),
  runEvent('step.completed', { ...stepShape, result: z.string() }),
  runEvent('step.failed', { ...stepShape, reason: z.string() }),
  runEvent('step.skipped', { ...stepShape, reason: z.string() }),
  /** `sideEffects`: what the tool declared (an MCP tool's come from its annotations), for the auditor's policy check. */
  runEvent('tool.started', { ...toolShape, args: z.unknown(), sideEffects: SideEffectsSchema.optional() }),
  /** `worker`: the Restate worker the call ran on (`--engine restate`). */
  runEvent('tool.completed', { ...toolShape, status: ToolStatusSchema, content: z.string(), parts: z.array(ToolResultPartSchema).optional(), worker: z.string().max(200).optional() }),
  /** A call that may have been steered by untrusted text, before it is put to a person (or refused: a rule never approves it). */
  runEvent('injection.suspected', { ...toolShape, args: z.unknown(), ...PossibleInjectionSchema.shape }),
  /**
   * A call that did not happen as asked. `by: "tool"` (or absent, in older runs): the tool started and its own confinement
   * refused (`outside_bounds`: a path outside the workspace, a symbolic link leading out, no OS sandbox). Every other one never
   * started: `by: "archon"` (`unknown_tool`, `invalid_arguments`, `not_allowed_for_role`), `"operator"` or `"rule"` (`--approve deny`):
   * `rejected` at its approval, `locked` by an earlier constraint, or `possible_injection` (untrusted text may have steered it, and a rule never approves that). `reason` is what the model was told.
   */
  runEvent('tool.refused', { ...toolShape, reason: z.string(), by: z.enum(['tool', 'archon', 'operator', 'rule']).optional(), code: ToolRefusalCodeSchema.optional() }),
  runEvent('approval.requested', {
    approvalId: z.string(),
    kind: ApprovalKindSchema,
    stepId: z.string().nullable(),
    summary: z.string(),
    action: z.unknown(),
    actionHash: z.string(),
    expiresAt: z.string().nullable(),
    explanation: ExplanationPacketSchema,
  }),
  /** `decidedBy` (absent in runs recorded before it was kept) says who answered; `channel`, where a person did. */
  runEvent('approval.resolved', { approvalId: z.string(), status: ApprovalStatusSchema, decision: ApprovalDecisionSchema, decidedBy: DecidedBySchema.optional(), channel: OperatorChannelSchema.optional() }),
  runEvent('policy.tightened', { from: PolicySchema, to: PolicySchema, reasons: z.array(z.string()) }),
  runEvent('constraint.locked', { constraint: LockedConstraintSchema }),
  /** "Allow all like this for this run": later calls of `tool` with these side effects run without asking (see grantsForRun). */
  runEvent('tool.granted', { stepId: z.string(), tool: z.string(), sideEffects: SideEffectsSchema }),
  /** A person raised a budget cap of this run: `value` is the cap from now on, after a resume too. */
  runEvent('budget.raised', { cap: z.enum(CAP_NAMES), value: z.number().positive() }),
  runEvent('budget.updated', {
    tokens: z.int().nonnegative(),
    costUsd: z.number().nonnegative(),
    maxTokens: z.int().nullable(),
    maxCostUsd: z.number().nullable(),
    modelCalls: z.int().nonnegative(),
    toolCalls: z.int().nonnegative(),
    /** False when nobody says what the model costs: `costUsd` is then not a cost (shown as "price unknown"). */
    priceKnown: z.boolean().optional(),
  }),
  runEvent('budget.warning', { message: z.string() }),
  runEvent('estop.triggered', { triggeredBy: EstopTriggerSchema, reason: z.string() }),
  /** `gaps`: success criteria the outcome check found unmet and the operator accepted; the run is `completed_with_gaps` (exit 7). */
  runEvent('run.completed', { answer: z.string(), kind: RunKindSchema.optional(), gaps: z.array(z.string()).optional() }),
  runEvent('run.failed', { error: z.string(), kind: RunKindSchema.optional() }),
  runEvent('run.stopped', { reason: z.string(), kind: RunKindSchema.optional() }),
  runEvent('run.paused', { reason: z.string(), whatToDo: z.string() }),
  runEvent('tool.orphan_killed', { callId: z.string(), pgid: z.int().positive() }),
  /** The Agent-Validator's verdict on a step's result (`stepId`) or, from the Meta-Validator, on the plan (`stepId: null`). */
  runEvent('validation.completed', {
    stepId: z.string().nullable(),
    verdict: VerdictSchema,
    gap: z.number().min(0).max(1),
    confidence: z.number().min(0).max(1).nullable(),
    reasons: z.array(z.string()),
    checks: z.array(ValidationCheckSchema),
  }),
  /** The goal as a contract, before planning (`by: archon`), and again when the operator edits it at the plan's approval. */
  runEvent('contract.ready', { contract: GoalContractSchema, by: z.enum(['archon', 'operator']) }),
  /**
   * The outcome check before the final answer: each success criterion against the evidence of the whole run, and the
   * critic's verdict on what only it can judge (`confidence` null when no critic judged). `gaps` name the criteria not met.
   */
  runEvent('outcome.checked', {
    criteria: z.array(CriterionOutcomeSchema),
    verdict: VerdictSchema,
    confidence: z.number().min(0).max(1).nullable(),
    gaps: z.array(z.string()),
    /** What happens next: the run goes on to its answer, a person decides, or the gaps end it. */
    route: z.enum(['accept', 'ask', 'gaps']),
  }),
  /** A step sent back to its model with the reason its result failed (`repair` counts from 1). */
  runEvent('step.retried', { ...stepShape, repair: z.int().positive(), reason: z.string() }),
  /** A scoped re-plan: `replaced` steps (the failed one and its not-yet-started dependants) gave way to `added` ones. */
  runEvent('plan.revised', { revision: z.int().positive(), replaced: z.array(z.string()), added: z.array(z.string()), reason: z.string(), plan: PlanSchema }),
  /** The Goal Gradient Solver's measure of how far the run is from its goal (0 reached, 1 nowhere); `delta` is the change since the last measure. */
  /** The run's gap to its goal, measured after a failure (before its re-plan) or after a repair (`after`; absent in older runs: a failure). */
  runEvent('goal.progress', { gap: z.number().min(0).max(1), delta: z.number().nullable(), after: z.enum(['failure', 'repair']).optional() }),
  runEvent('escalation.raised', { stepId: z.string().nullable(), approvalId: z.string(), reason: z.string(), gapTrend: z.array(z.number()) }),
  /** An MCP server's definition of a tool changed: earlier grants for it no longer apply. */
  runEvent('tool.definition_changed', { tool: z.string(), server: z.string(), previousHash: z.string(), hash: z.string() }),
  /** An MCP server could not be started or listed (`kind`: not_found, crashed, timeout, protocol, sandbox, unreachable): the run goes on without its tools. */
  runEvent('mcp.server_failed', { server: z.string(), kind: z.string(), message: z.string() }),
  /** Memories placed in a request under "Relevant memory": for planning (no `stepId`) or for a step. */
  runEvent('memory.recalled', { stepId: z.string().optional(), items: z.array(RecalledMemorySchema) }),
  /** Recalled items whose text reads like instructions to the assistant (`instructionLike` in memory/recall.ts): given to the model marked, never to follow. */
  runEvent('memory.flagged', { stepId: z.string().optional(), items: z.array(MemoryIdSchema) }),
  /** A step's oldest turns were summarised into a note to stay within the context; the turns stay in the store (`pointer`). */
  runEvent('memory.compacted', { stepId: z.string(), turns: z.int().positive(), tokensBefore: z.int().nonnegative(), tokensAfter: z.int().nonnegative(), pointer: z.string() }),
  /** One message between agents, stored before it is delivered (see schemas/bus.ts). */
  runEvent('bus.message', BusEnvelopeSchema.omit({ ts: true }).shape),
  /** A plan step of kind `subagent` started its child run. */
  runEvent('subagent.started', { stepId: z.string(), childRunId: RunIdSchema, goal: z.string(), role: z.string().nullable(), depth: z.int().positive() }),
]);
export type RunEvent = z.infer<typeof RunEventSchema>;
export type RunEventType = RunEvent['type'];

/** State that belongs to the whole data dir rather than one run. */
export const SystemEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('system.estop'), ts: z.string(), state: EstopStateSchema }),
  z.object({ type: z.literal('system.confirmation'), ts: z.string(), confirmation: HostConfirmationSchema }),
]);
export type SystemEvent = z.infer<typeof SystemEventSchema>;

/** What the IPC event channel and the WebSocket carry. */
export const ArchonEventSchema = z.union([RunEventSchema, SystemEventSchema]);
export type ArchonEvent = z.infer<typeof ArchonEventSchema>;
