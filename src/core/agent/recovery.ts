import { ArchonError, describeZodError } from '../../shared/errors';
import { EscalationChoiceSchema, type ApprovalDecision, type EscalationChoice } from '../../shared/schemas/approval';
import { PlanStepSchema, type Plan, type PlanStep } from '../../shared/schemas/plan';
import { asksAt } from '../../shared/policy';
import { applyLock, explain, requestApproval, runRejected } from '../approval/approval-gate';
import { decide, MAX_EDIT_ATTEMPTS } from '../approval/edit-loop';
import { mergeReplacement, replanSubtree, revisionErrors, type ReplanScope } from '../planner/planner';
import { announcePlanVerdict } from '../planner/meta-validator';
import { dependentsOf } from '../planner/validate-plan';
import { describeTrend, STRATEGY_CHANGE, unfinishedShare, type GoalGradient } from './goal-gradient';
import { callModel, noteDialect, type RunContext } from './run-context';
import { REPLACED, type PlanView, type Recover, type Recovery } from './scheduler';
import { isRunLevel } from './step-executor';

/** The operator is asked about one step at most this many times; then the run ends. */
export const MAX_ESCALATIONS_PER_STEP = 3;
/** A revision the operator rejects is re-planned with the feedback at most this many times. */
export const MAX_REVISION_REJECTIONS = 3;

interface Revision {
  plan: Plan;
  added: PlanStep[];
}

/** Every id the run has used, replaced steps included: a new step never takes one. */
function takenIds(context: RunContext): Set<string> {
  return new Set(context.runs.getSteps(context.runId).map((step) => step.spec.id));
}

function revisionsSoFar(context: RunContext): number {
  return Math.max(0, ...context.runs.getSteps(context.runId).map((step) => step.revision));
}

/** The steps that failed in this run, each with why: the decompositions that did not work. */
function failedAttempts(context: RunContext): { stepId: string; revision: number; description: string; reason: string }[] {
  return context.runs
    .getSteps(context.runId)
    .filter((step) => step.status === 'failed')
    .map((step) => ({ stepId: step.spec.id, revision: step.revision, description: step.spec.description, reason: step.error ?? 'failed' }));
}

function revisionAction(revision: number, reason: string, replaced: readonly string[], proposal: Revision) {
  return { revision, reason, replaced, added: proposal.added, steps: proposal.plan.steps };
}

/** An edited revision is the whole revised plan (`{steps}`): the steps that stay keep their spec; the others are the new replacement. */
function editedRevision(context: RunContext, scope: ReplanScope, revision: number, edited: unknown): { ok: true; value: Revision; action: unknown } | { ok: false; reason: string } {
  const steps = PlanStepSchema.array().min(1).safeParse((edited as { steps?: unknown } | null)?.steps);
  if (!steps.success) return { ok: false, reason: `The edited plan does not match the schema: ${describeZodError(steps.error)}.` };
  const kept = new Set(scope.plan.steps.filter((step) => !scope.replaced.includes(step.id)).map((step) => step.id));
  const replacement = steps.data.filter((step) => !kept.has(step.id));
  if (replacement.length === 0) return { ok: false, reason: 'The edited plan has no step in place of the replaced ones.' };
  const merged = mergeReplacement(scope.plan, scope.replaced, replacement, takenIds(context), revision);
  const errors = revisionErrors(merged.plan, merged.added, scope.replaced, context.tools);
  return errors.length > 0 ? { ok: false, reason: errors.join(' ') } : { ok: true, value: merged, action: revisionAction(revision, scope.reason, scope.replaced, merged) };
}

/**
 * The revised plan, checked by the Meta-Validator and, where the policy approves plans, put to the
 * operator as a diff against the current one. A rejection re-plans with the feedback
 * (MAX_REVISION_REJECTIONS at most); `null` when none was accepted.
 */
async function approvedRevision(context: RunContext, scope: ReplanScope, revision: number): Promise<Revision | null> {
  const feedback: string[] = [];
  for (let rejections = 0; rejections < MAX_REVISION_REJECTIONS; rejections++) {
    const proposal = await replanSubtree(
      { ...scope, operatorFeedback: feedback },
      { mode: context.mode, tools: context.tools, callModel: (request) => callModel(context, { purpose: 'replan', ...request }, null), onDialect: (dialect) => noteDialect(context, dialect), takenIds: takenIds(context), revision },
    );
    const verdict = announcePlanVerdict(context.events, context.runId, proposal.plan);
    if (!asksAt(context.policy, 'plan')) return proposal;
    const added = proposal.added.map((step) => step.id);
    const answer = await decide(
      context,
      {
        kind: 'plan',
        stepId: null,
        summary: `Revised plan ${revision}: ${scope.replaced.join(', ')} replaced by ${added.join(', ')} (step ${scope.failed.id} failed)`,
        action: revisionAction(revision, scope.reason, scope.replaced, proposal),
        explanation: explain(context, {
          summary: `Step ${scope.failed.id} failed (${scope.reason.slice(0, 200)}); ${scope.replaced.length} step(s) give way to ${added.length} new one(s). Completed and running steps stay.`,
          stepId: null,
          risk: proposal.added.some((step) => step.risk === 'critical' || step.risk === 'high') ? 'high' : 'low',
          factors: [...verdict.reasons.map((reason) => `Meta-Validator: ${reason}`), ...proposal.added.filter((step) => step.tool).map((step) => `step ${step.id} calls ${step.tool}`)],
          reversibility: 'not_applicable',
        }),
      },
      (edited) => editedRevision(context, scope, revision, edited),
    );
    if (answer.verdict === 'approve') return proposal;
    if (answer.verdict === 'edit') return answer.value;
    if (answer.verdict === 'lock') {
      applyLock(context, answer.outcome.decision);
      feedback.push(`Never use ${answer.outcome.decision.verdict === 'lock' ? answer.outcome.decision.constraint.tool : 'that tool'}.`);
      continue;
    }
    if (answer.stop) throw runRejected(`The operator rejected the revised plan and stopped the run: ${answer.feedback}`);
    feedback.push(answer.feedback);
  }
  return null;
}

function stored(context: RunContext, revision: number, replaced: readonly string[], proposal: Revision, reason: string): Recovery {
  context.runs.revisePlan(context.runId, revision, replaced, proposal.added, REPLACED);
  context.plan = proposal.plan;
  context.events.append(context.runId, 'plan.revised', { revision, replaced: [...replaced], added: proposal.added.map((step) => step.id), reason, plan: proposal.plan });
  return { kind: 'revise', plan: proposal.plan, replaced };
}

function ended(context: RunContext, gradient: GoalGradient, failed: PlanStep, reason: string, how: string): Recovery {
  const diagnosis =
    `Step ${failed.id} could not be completed: ${reason} ` +
    `Recovery: ${revisionsSoFar(context)} re-plan(s) of at most ${context.options.maxReplans}; gap trend ${describeTrend(gradient.trend)}. ${how}`;
  return { kind: 'end', error: new ArchonError('RECOVERY_EXHAUSTED', diagnosis) };
}

function choiceOf(decision: ApprovalDecision): EscalationChoice | null {
  if (decision.verdict === 'approve' || decision.verdict === 'lock') return { choice: 'retry' };
  if (decision.verdict === 'reject') return { choice: 'end' };
  const parsed = EscalationChoiceSchema.safeParse(decision.edited);
  return parsed.success ? parsed.data : null;
}

/** A person's choice applied: stored first (a new attempt, or the edited spec), then handed to the scheduler. */
function applyChoice(context: RunContext, gradient: GoalGradient, failed: PlanStep, reason: string, choice: EscalationChoice, feedback: string): Recovery {
  if (choice.choice === 'end') return ended(context, gradient, failed, reason, `The operator ended the run at the escalation: ${feedback}`);
  if (choice.choice === 'skip') return { kind: 'skip' };
  const step = choice.choice === 'edit' ? { ...failed, description: choice.description, ...(choice.expected_output === undefined ? {} : { expected_output: choice.expected_output }) } : failed;
  if (choice.choice === 'edit') context.runs.replaceStepSpec(context.runId, step);
  context.runs.retryStep(context.runId, step.id);
  if (context.plan) context.plan = { ...context.plan, steps: context.plan.steps.map((candidate) => (candidate.id === step.id ? step : candidate)) };
  return { kind: 'retry', step };
}

/**
 * The last link of the chain: the operator sees the step, the failed attempts, the validators'
 * verdicts and the gap trend, and chooses retry, skip, edit or end (`approve` is retry, `reject` end).
 */
async function escalate(context: RunContext, gradient: GoalGradient, failed: PlanStep, reason: string, why: string, asked: Map<string, number>): Promise<Recovery> {
  const count = (asked.get(failed.id) ?? 0) + 1;
  asked.set(failed.id, count);
  if (count > MAX_ESCALATIONS_PER_STEP) return ended(context, gradient, failed, reason, `The operator was asked ${MAX_ESCALATIONS_PER_STEP} times about this step.`);
  const attempts = failedAttempts(context);
  const ids = new Set(attempts.map((attempt) => attempt.stepId));
  const verdicts = context.runs.events(context.runId, Number.MAX_SAFE_INTEGER).flatMap((event) => (event.type === 'validation.completed' && event.stepId !== null && ids.has(event.stepId) ? [{ stepId: event.stepId, verdict: event.verdict, gap: event.gap, reasons: event.reasons }] : []));
  const gapTrend = [...gradient.trend];
  const action = { stepId: failed.id, description: failed.description, expected_output: failed.expected_output ?? null, reason, why, attempts, verdicts, gapTrend, replans: revisionsSoFar(context), maxReplans: context.options.maxReplans, choices: ['retry', 'skip', 'edit', 'end'] };
  for (let ask = 1; ask <= MAX_EDIT_ATTEMPTS; ask++) {
    const approvalId = context.newId();
    context.events.append(context.runId, 'escalation.raised', { stepId: failed.id, approvalId, reason: why, gapTrend });
    const outcome = await requestApproval(context, {
      id: approvalId,
      kind: 'escalation',
      stepId: failed.id,
      summary: `${ask > 1 ? 'That answer was not a choice (retry, skip, edit or end). ' : ''}Step ${failed.id} still fails after repairs and re-plans (${why}): retry, skip, edit or end?`,
      action,
      explanation: explain(context, {
        summary: `Step ${failed.id} failed: ${reason.slice(0, 200)} Gap trend: ${describeTrend(gapTrend)}.`,
        stepId: failed.id,
        risk: failed.risk ?? 'medium',
        factors: attempts.map((attempt) => `${attempt.stepId} failed: ${attempt.reason.slice(0, 200)}`),
        reversibility: 'not_applicable',
        alternatives: ['retry the step', 'skip it (the steps after it run without its result)', 'edit the step and run it', 'end the run'],
      }),
    });
    applyLock(context, outcome.decision);
    const choice = choiceOf(outcome.decision);
    const feedback = outcome.decision.verdict === 'reject' ? outcome.decision.feedback : 'ended';
    if (choice) return applyChoice(context, gradient, failed, reason, choice, feedback);
  }
  return ended(context, gradient, failed, reason, 'No valid choice was given at the escalation.');
}

/** The failed step and its dependants that have not started: what a scoped re-plan replaces. */
function scopeOf(context: RunContext, failed: PlanStep, reason: string, view: PlanView, strategy: boolean): ReplanScope {
  const replaced = [failed.id, ...dependentsOf(view.plan, failed.id).filter((id) => view.states.get(id)?.status === 'pending')];
  const completed = new Map(view.plan.steps.flatMap((step) => (view.states.get(step.id)?.status === 'completed' ? [[step.id, view.states.get(step.id)?.result ?? '']] : [])) as [string, string][]);
  const decompositions = strategy ? failedAttempts(context).map((attempt) => `${attempt.stepId} (revision ${attempt.revision}): ${attempt.description} — failed: ${attempt.reason}`) : undefined;
  return { plan: view.plan, failed, reason, replaced, completed, ...(decompositions ? { failedDecompositions: decompositions } : {}) };
}

/**
 * Recovery after a failed step (RP-01): measure the gap (goal.progress); while re-plans are left and
 * the Goal Gradient Solver sees progress, re-plan the failed subtree; after STALL_LIMIT re-plans
 * without progress, re-plan once with a change of strategy; then, or when re-plans run out or fail,
 * escalate to the operator.
 */
export function recoveryFor(context: RunContext, gradient: GoalGradient): Recover {
  const asked = new Map<string, number>();
  return async (failed, reason, view) => {
    context.events.append(context.runId, 'goal.progress', gradient.record(unfinishedShare(view)));
    const revision = revisionsSoFar(context) + 1;
    const correction = gradient.next();
    if (revision > context.options.maxReplans) return escalate(context, gradient, failed, reason, `the run has used its ${context.options.maxReplans} re-plan(s)`, asked);
    if (correction === 'escalate') return escalate(context, gradient, failed, reason, 'neither re-plans nor a change of strategy closed the gap to the goal', asked);
    const strategy = correction === 'change_strategy';
    try {
      const scope = scopeOf(context, failed, reason, view, strategy);
      const proposal = await approvedRevision(context, scope, revision);
      if (!proposal) return escalate(context, gradient, failed, reason, 'the operator rejected every revised plan', asked);
      gradient.noteRevision(strategy);
      return stored(context, revision, scope.replaced, proposal, `${strategy ? `${STRATEGY_CHANGE}: ` : ''}Step ${failed.id} failed: ${reason}`);
    } catch (error) {
      if (context.signal.aborted || isRunLevel(error) || !ArchonError.isInstance(error)) throw error;
      return escalate(context, gradient, failed, reason, `the re-plan failed: ${error.message}`, asked);
    }
  };
}
