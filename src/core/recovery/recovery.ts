import { ArchonError, describeZodError } from '../../shared/errors';
import { describeGapTrend } from '../../shared/gap-trend';
import { planIndex } from '../../shared/plan-graph';
import type { EscalationChoice } from '../../shared/schemas/approval';
import { PlanStepSchema, type PlanStep } from '../../shared/schemas/plan';
import { approveRevision, askEscalation, revisionAction, type RevisionProposal } from '../approval/checkpoints';
import type { EditCheck } from '../approval/edit-loop';
import { handOff } from '../bus/hand-off';
import { announcePlanVerdict } from '../planner/meta-validator';
import { mergeReplacement, REPLAN_RESULT_CHARS, replanSubtree, revisionErrors, type ReplanScope } from '../planner/planner';
import { fenceNonce } from '../provenance/spotlight';
import { resultAsSeen } from '../provenance/step-provenance';
import { planStepCap } from '../planner/validate-plan';
import { STRATEGY_CHANGE, type GoalGradient } from './goal-gradient';
import { gradientOf, measureProgress } from './goal-progress';
import { asRole, fitCallCaps, noteDialect, resumeAdvice, type RunCapability, type RunContext } from '../run/run-context';
import { callModel } from '../run/model-gate';
import { stateOf, type StepFailure } from '../run/hooks';
import { REPLACED, type PlanView, type Recovery } from '../run/plan-view';
import { isRunLevel } from '../run/run-level';

/** The operator is asked about one step at most this many times; then the run ends. */
export const MAX_ESCALATIONS_PER_STEP = 3;
/** A revision the operator rejects is re-planned with the feedback at most this many times. */
export const MAX_REVISION_REJECTIONS = 3;

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

/** An edited revision is the whole revised plan (`{steps}`): the steps that stay keep their spec; the others are the replacement. */
function editedRevision(context: RunContext, scope: ReplanScope, proposal: RevisionProposal, edited: unknown): EditCheck<RevisionProposal> {
  const steps = PlanStepSchema.array().min(1).safeParse((edited as { steps?: unknown } | null)?.steps);
  if (!steps.success) return { ok: false, reason: `The edited plan does not match the schema: ${describeZodError(steps.error)}.` };
  const kept = new Set(scope.plan.steps.filter((step) => !scope.replaced.includes(step.id)).map((step) => step.id));
  const replacement = steps.data.filter((step) => !kept.has(step.id));
  if (replacement.length === 0) return { ok: false, reason: 'The edited plan has no step in place of the replaced ones.' };
  const merged = mergeReplacement(scope.plan, scope.replaced, replacement, takenIds(context), proposal.revision);
  const errors = revisionErrors(merged.plan, merged.added, scope.replaced, context.tools, { maxSteps: planStepCap(context.options), roles: context.roles.registry, depth: context.options.depth });
  if (errors.length > 0) return { ok: false, reason: errors.join(' ') };
  const value = { ...proposal, ...merged };
  return { ok: true, value, action: revisionAction(value) };
}

/** Re-plans the scope until the operator accepts a revision (where the policy asks), MAX_REVISION_REJECTIONS at most; `null` when none was accepted. */
async function acceptedRevision(context: RunContext, scope: ReplanScope, revision: number): Promise<RevisionProposal | null> {
  const feedback: string[] = [];
  const planner = asRole(context, 'planner');
  for (let rejections = 0; rejections < MAX_REVISION_REJECTIONS; rejections++) {
    const merged = await handOff(context, { from: 'coordinator', to: 'planner', body: `Re-plan step ${scope.failed.id} and the steps after it (${scope.replaced.join(', ')}): ${scope.reason}` }, () =>
      replanSubtree(
        { ...scope, operatorFeedback: feedback },
        { mode: planner.mode, tools: context.tools, maxSteps: planStepCap(context.options), roles: context.roles.registry, depth: context.options.depth, callModel: (request) => callModel(planner, { purpose: 'replan', ...request }, null), onDialect: (dialect) => noteDialect(planner, dialect), takenIds: takenIds(context), revision },
      ),
    (revised) => JSON.stringify(revised.plan));
    const proposal: RevisionProposal = { revision, failedStepId: scope.failed.id, reason: scope.reason, replaced: scope.replaced, ...merged };
    const answer = await approveRevision(context, proposal, await announcePlanVerdict(context, proposal.plan), (edited) => editedRevision(context, scope, proposal, edited));
    if (answer.accepted) return answer.proposal;
    feedback.push(answer.feedback);
  }
  return null;
}

/** Stored, then announced: the replaced steps keep their status and name this revision; the new ones join the plan. */
function stored(context: RunContext, proposal: RevisionProposal, reason: string): Recovery {
  context.runs.revisePlan(context.runId, proposal.revision, proposal.replaced, proposal.added, REPLACED);
  context.plan = proposal.plan;
  fitCallCaps(context, context.runs.getSteps(context.runId).length);
  context.events.append(context.runId, 'plan.revised', { revision: proposal.revision, replaced: [...proposal.replaced], added: proposal.added.map((step) => step.id), reason, plan: proposal.plan });
  return { kind: 'revise', plan: proposal.plan, replaced: proposal.replaced };
}

/** The run ends failed with a diagnosis: the step, why, the re-plans spent and the gap trend. */
function ended(context: RunContext, gradient: GoalGradient, failed: PlanStep, reason: string, how: string): Recovery {
  const diagnosis = `Step ${failed.id} could not be completed: ${reason} Recovery: ${revisionsSoFar(context)} re-plan(s) of at most ${context.options.maxReplans}; gap trend ${describeGapTrend(gradient.trend)}. ${how} ${resumeAdvice(context.runId)}`;
  return { kind: 'end', error: new ArchonError('RECOVERY_EXHAUSTED', diagnosis) };
}

/** A person's choice applied: stored first (the edited spec, a new attempt), then handed to the scheduler. */
function applyChoice(context: RunContext, gradient: GoalGradient, failed: PlanStep, reason: string, answer: { choice: EscalationChoice; feedback: string }): Recovery {
  const { choice } = answer;
  if (choice.choice === 'end') return ended(context, gradient, failed, reason, `The operator ended the run at the escalation: ${answer.feedback}`);
  if (choice.choice === 'skip') return { kind: 'skip' };
  const step = choice.choice === 'edit' ? { ...failed, description: choice.description, ...(choice.expected_output === undefined ? {} : { expected_output: choice.expected_output }) } : failed;
  if (choice.choice === 'edit') context.runs.replaceStepSpec(context.runId, step);
  context.runs.retryStep(context.runId, step.id);
  if (context.plan) context.plan = { ...context.plan, steps: context.plan.steps.map((candidate) => (candidate.id === step.id ? step : candidate)) };
  return { kind: 'retry', step };
}

async function escalate(context: RunContext, gradient: GoalGradient, failed: PlanStep, reason: string, why: string, asked: Map<string, number>): Promise<Recovery> {
  const count = (asked.get(failed.id) ?? 0) + 1;
  asked.set(failed.id, count);
  if (count > MAX_ESCALATIONS_PER_STEP) return ended(context, gradient, failed, reason, `The operator was asked ${MAX_ESCALATIONS_PER_STEP} times about this step.`);
  const attempts = failedAttempts(context);
  const ids = new Set(attempts.map((attempt) => attempt.stepId));
  const verdicts = context.runs
    .events(context.runId, Number.MAX_SAFE_INTEGER)
    .flatMap((event) => (event.type === 'validation.completed' && event.stepId !== null && ids.has(event.stepId) ? [{ stepId: event.stepId, verdict: event.verdict, gap: event.gap, reasons: event.reasons }] : []));
  const answer = await handOff(context, { from: 'coordinator', to: 'operator', kind: 'escalation', body: `Step ${failed.id} failed: ${reason} (${why})` }, () =>
    askEscalation(context, { step: failed, reason, why, attempts, verdicts, gapTrend: [...gradient.trend], replans: revisionsSoFar(context), maxReplans: context.options.maxReplans }),
  (decided) => JSON.stringify(decided));
  return applyChoice(context, gradient, failed, reason, answer);
}

/** The failed step and its dependants that have not started: what a scoped re-plan replaces. */
function scopeOf(context: RunContext, failed: PlanStep, reason: string, view: PlanView, changeStrategy: boolean): ReplanScope {
  const replaced = [failed.id, ...planIndex(view.plan).downstreamOf(failed.id).filter((id) => view.states.get(id)?.status === 'pending')];
  const completed = new Map<string, string>();
  for (const step of view.plan.steps) {
    const state = view.states.get(step.id);
    if (state?.status === 'completed') completed.set(step.id, resultAsSeen(context, step.id, (state.result ?? '').slice(0, REPLAN_RESULT_CHARS)));
  }
  // A failure reason can quote what the step read or wrote (a verdict, a claim): fenced like its result.
  const scope: ReplanScope = { plan: view.plan, failed, reason: resultAsSeen(context, failed.id, reason), replaced, completed, nonce: fenceNonce(context) };
  if (!changeStrategy) return scope;
  return { ...scope, failedDecompositions: failedAttempts(context).map((attempt) => `${attempt.stepId} (revision ${attempt.revision}): ${attempt.description} — failed: ${resultAsSeen(context, attempt.stepId, attempt.reason)}`) };
}

/** Whether the gap was measured after the step's last failure: an earlier process got that far before it ended. */
function measuredSinceFailure(context: RunContext, stepId: string): boolean {
  const events = context.runs.events(context.runId, Number.MAX_SAFE_INTEGER);
  const failedAt = events.findLastIndex((event) => event.type === 'step.failed' && event.stepId === stepId);
  return failedAt >= 0 && events.slice(failedAt + 1).some((event) => event.type === 'goal.progress' && event.after !== 'repair');
}

/**
 * Recovery after a failed step: measure the gap (`goal.progress`, after: failure); while re-plans are left and
 * the Goal Gradient Solver sees progress, re-plan the failed subtree; after STALL_LIMIT re-plans
 * without progress, re-plan once with a change of strategy; then, or when re-plans run out or fail,
 * escalate to the operator.
 */
async function recover(context: RunContext, failed: PlanStep, { reason, view, resumed }: StepFailure): Promise<Recovery> {
  const gradient = gradientOf(context);
  const asked = stateOf(context, 'escalations', () => new Map<string, number>());
  if (!resumed || !measuredSinceFailure(context, failed.id)) await measureProgress(context, 'failure', view);
  const revision = revisionsSoFar(context) + 1;
  const correction = gradient.next();
  if (correction === 'escalate') return escalate(context, gradient, failed, reason, 'neither re-plans nor a change of strategy closed the gap to the goal', asked);
  if (revision > context.options.maxReplans) return escalate(context, gradient, failed, reason, `the run has used its ${context.options.maxReplans} re-plan(s)`, asked);
  const changeStrategy = correction === 'change_strategy';
  try {
    const proposal = await acceptedRevision(context, scopeOf(context, failed, reason, view, changeStrategy), revision);
    if (!proposal) return escalate(context, gradient, failed, reason, 'the operator rejected every revised plan', asked);
    gradient.noteRevision(changeStrategy);
    return stored(context, proposal, `${changeStrategy ? `${STRATEGY_CHANGE}: ` : ''}Step ${failed.id} failed: ${reason}`);
  } catch (error) {
    if (context.signal.aborted || isRunLevel(error) || !ArchonError.isInstance(error)) throw error;
    return escalate(context, gradient, failed, reason, `the re-plan failed: ${error.message}`, asked);
  }
}

/** Repair, re-plan, escalation and the Goal Gradient Solver: a failed step's way back, and the gap measured after each repair. */
export const recovery: RunCapability = {
  name: 'recovery',
  hooks: {
    stepFailed: recover,
    stepRepaired: (context) => measureProgress(context, 'repair'),
  },
};
