import { raceAbort } from '../../shared/abort';
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../shared/canonical-json';
import { planIndex } from '../../shared/plan-graph';
import { ArchonError } from '../../shared/errors';
import type { ApprovalDecision, ApprovalKind, ApprovalPreview, ApprovalRequest, ApprovalStatus, Decider, ExplanationPacket } from '../../shared/schemas/approval';
import type { Risk } from '../../shared/schemas/plan';
import type { RunContext } from '../run/run-context';
import { cancelled } from '../model/retry-policy';
import { meanOf } from './autonomy-signals';

/** How long each kind of request waits for a person (plan: 5 minutes; seed 004's 30/15/10 minutes). */
export const DEFAULT_EXPIRY_MS: Record<ApprovalKind, number> = {
  plan: 5 * 60_000,
  model_call: 30 * 60_000,
  tool_call: 30 * 60_000,
  subagent_spawn: 30 * 60_000,
  uncertain_repeat: 30 * 60_000,
  resume_run: 10 * 60_000,
  step_result: 15 * 60_000,
  final_answer: 15 * 60_000,
  critical_decision: 10 * 60_000,
  escalation: 30 * 60_000,
  elicitation: 10 * 60_000,
  budget_raise: 10 * 60_000,
  outcome: 15 * 60_000,
};

/** A stable hash of the exact action: keys sorted, so equal actions hash equal. */
export function actionHash(action: unknown): string {
  return createHash('sha256').update(canonicalJson(action)).digest('hex');
}

/** What asking a person needs of a run: its identity, channel, budget and plan (for the packet), and its locks. */
export type GateContext = Pick<RunContext, 'runId' | 'signal' | 'approvals' | 'expiryMs' | 'budget' | 'plan' | 'runs' | 'events' | 'lockedTools' | 'now' | 'newId'>;

export interface ExplanationInput {
  summary: string;
  stepId: string | null;
  risk: Risk;
  factors: string[];
  reversibility: ExplanationPacket['reversibility'];
  alternatives?: string[];
  /** How sure the validators are: by default the latest confidence measured for the step (`stepId`), or with `'run'` their mean over the run. */
  confidence?: number | null | 'run';
  preview?: ApprovalPreview;
  grantable?: boolean;
}

/** The validators' confidence an explanation packet carries, read from the run's stored verdicts. */
function validatorConfidence(context: GateContext, input: ExplanationInput): number | null {
  if (typeof input.confidence === 'number') return input.confidence;
  if (input.confidence !== 'run' && input.stepId === null) return null;
  if (context.events.holds(context.runId, 'validation.completed')) context.events.flush();
  // Read in SQL, not by loading the run's events: a packet costs the same at step 1,000 as at step 1.
  const measured = context.runs.confidences(context.runId, input.confidence === 'run' ? null : input.stepId);
  return input.confidence === 'run' ? meanOf(measured) : (measured.at(-1) ?? null);
}

/** Seed 000's explanation packet: why, how sure, how risky, how reversible, what it costs, what it touches. */
export function explain(context: GateContext, input: ExplanationInput): ExplanationPacket {
  const summary = input.summary.length > 500 ? `${input.summary.slice(0, 497)}...` : input.summary;
  return {
    summary,
    confidence: validatorConfidence(context, input),
    risk: { level: input.risk, factors: input.factors },
    reversibility: input.reversibility,
    cost: { tokensUsed: context.budget.totals.tokens, tokensLeft: context.budget.tokensLeft(), estimatedUsd: context.budget.totals.costUsd },
    ...(input.stepId && context.plan ? planIndex(context.plan).downstreamSummary(input.stepId) : { downstream: [], downstreamCount: 0 }),
    alternatives: input.alternatives ?? [],
    ...(input.preview ? { preview: input.preview } : {}),
    ...(input.grantable !== undefined ? { grantable: input.grantable } : {}),
  };
}

export interface GateRequest {
  /** Set when an event must name the request before it is asked (an escalation); a new id otherwise. */
  id?: string;
  kind: ApprovalKind;
  stepId: string | null;
  summary: string;
  action: unknown;
  explanation: ExplanationPacket;
  /** What is stored of an edit when it must not be kept as typed (a form's secrets); the edit itself is used unchanged. */
  storedEdit?: (edited: unknown) => unknown;
}

export interface GateOutcome {
  status: Exclude<ApprovalStatus, 'pending' | 'stopped'>;
  decision: ApprovalDecision;
  decider: Decider;
}

const EXPIRY: Decider = { decidedBy: 'expiry' };

function statusOf(decision: ApprovalDecision): GateOutcome['status'] {
  return decision.verdict === 'approve' ? 'approved' : decision.verdict === 'edit' ? 'edited' : decision.verdict === 'lock' ? 'locked' : 'rejected';
}

/**
 * Asks the human channel. The request (bound to the hash of its exact action) is stored and
 * announced; the answer, or its expiry, is on disk with it, and with who decided (the operator and
 * where, the rule, or the expiry), before anything acts on it. An expired request counts as
 * rejected. A stop ends the wait at once. A channel that answers by rule (the `--approve` flag) is
 * not waited for: the request and its answer are stored in one write.
 */
export async function requestApproval(context: GateContext, request: GateRequest): Promise<GateOutcome> {
  const id = request.id ?? context.newId();
  const requestedAt = context.now();
  const expiryMs = context.expiryMs[request.kind] ?? DEFAULT_EXPIRY_MS[request.kind];
  const publicRequest: ApprovalRequest = {
    id,
    runId: context.runId,
    stepId: request.stepId,
    kind: request.kind,
    summary: request.summary,
    action: request.action,
    actionHash: actionHash(request.action),
    explanation: request.explanation,
    requestedAt: requestedAt.toISOString(),
    expiresAt: new Date(requestedAt.getTime() + expiryMs).toISOString(),
  };
  const { rule } = context.approvals;
  if (rule) {
    if (context.signal.aborted) throw cancelled(context.signal);
    const outcome = outcomeOf(rule(publicRequest), { decidedBy: 'rule' });
    const stored = storedDecision(request, outcome.decision);
    await context.runs.recordAnsweredApproval(publicRequest, outcome.status, stored, outcome.decider);
    announceRequest(context, publicRequest);
    announceResolved(context, id, outcome, stored);
    return outcome;
  }
  context.runs.createApproval(publicRequest);
  announceRequest(context, publicRequest);
  const expiry = AbortSignal.timeout(expiryMs);
  const signal = AbortSignal.any([context.signal, expiry]);
  let outcome: GateOutcome;
  try {
    const asked = context.approvals.decide(publicRequest, { signal });
    // Announced once the channel holds the request and before the wait, so a UI that lists pending
    // requests on this event finds it, and a terminal prints it before its prompt.
    context.events.flush();
    outcome = outcomeOf(await raceAbort(asked, signal), operatorAt(context.approvals.channel));
  } catch (error) {
    if (context.signal.aborted) {
      await context.runs.resolveApproval(id, 'expired', { verdict: 'reject', feedback: 'The run was stopped before anyone answered.' }, context.now().toISOString(), EXPIRY);
      throw cancelled(context.signal);
    }
    if (!expiry.aborted) throw error;
    outcome = { status: 'expired', decision: { verdict: 'reject', feedback: `No one answered within ${Math.round(expiryMs / 1000)} s; the request expired and counts as rejected.` }, decider: EXPIRY };
  }
  const stored = storedDecision(request, outcome.decision);
  await context.runs.resolveApproval(id, outcome.status, stored, context.now().toISOString(), outcome.decider);
  announceResolved(context, id, outcome, stored);
  return outcome;
}

function outcomeOf(decision: ApprovalDecision, decider: Decider): GateOutcome {
  return { status: statusOf(decision), decision, decider };
}

function operatorAt(channel: Decider['channel']): Decider {
  return channel ? { decidedBy: 'operator', channel } : { decidedBy: 'operator' };
}

function announceResolved(context: GateContext, approvalId: string, outcome: GateOutcome, stored: ApprovalDecision): void {
  context.events.append(context.runId, 'approval.resolved', { approvalId, status: outcome.status, decision: stored, ...outcome.decider });
}

/** What is kept of a decision: an edit as `storedEdit` says (a form's secrets left out). */
function storedDecision(request: GateRequest, decision: ApprovalDecision): ApprovalDecision {
  return decision.verdict === 'edit' && request.storedEdit ? { ...decision, edited: request.storedEdit(decision.edited) } : decision;
}

function announceRequest(context: GateContext, request: ApprovalRequest): void {
  const { id, kind, stepId, summary, action, actionHash: hash, expiresAt, explanation } = request;
  context.events.append(context.runId, 'approval.requested', { approvalId: id, kind, stepId, summary, action, actionHash: hash, expiresAt, explanation });
}

/** A rejection that ends the run (exit 5): the final answer, a plan out of re-plans, or a person saying stop. */
export function runRejected(reason: string): ArchonError {
  return new ArchonError('APPROVAL_REJECTED', reason, { details: { stop: true } });
}

/** Applies a lock decision: the tool is gone for the rest of the run and the runs below it, in code, not in a prompt. */
export function applyLock(context: GateContext, decision: ApprovalDecision): void {
  if (decision.verdict === 'lock') lock(context, decision.constraint.tool);
}

/** Records the locks of the runs above as this run's own (a sub-agent's start and resume), so its events name every lock it holds. */
export function inheritLocks(context: GateContext): void {
  for (const tool of context.lockedTools.inherited()) lock(context, tool);
}

function lock(context: GateContext, tool: string): void {
  if (context.lockedTools.add(tool)) context.events.append(context.runId, 'constraint.locked', { constraint: { kind: 'never_tool', tool } });
}
