import type { PlanStep } from '../../shared/schemas/plan';
import { reviewStepResult, type ResultAssessment } from '../approval/checkpoints';
import { publishCritique } from '../bus/hand-off';
import { validateStep, type StepValidation } from './step-validator';
import type { RunCapability, RunContext } from '../run/run-context';
import type { ReviewedAnswer } from '../run/hooks';
import type { StepConversation } from '../run/step-conversation';
import type { StepOutcome } from '../run/plan-view';
import { capObservation } from '../model/observation';
import { CONFIDENCE_AUTO, CONFIDENCE_REVIEW } from '../run/confidence';


/** How a repair request opens in the step's conversation: the count of these is the step's repair count, after a crash too. */
export const REPAIR_PREFIX = 'Your result did not pass validation';

type Route = 'accept' | 'ask' | 'repair';

function routeOf(context: RunContext, validation: StepValidation): Route {
  if (validation.verdict === 'fail') return 'repair';
  const confidence = validation.confidence;
  if (confidence === null || confidence >= CONFIDENCE_AUTO) return 'accept';
  if (confidence < CONFIDENCE_REVIEW) return 'repair';
  return context.policy === 'permissive' ? 'accept' : 'ask';
}

function reasonOf(validation: StepValidation): string {
  const reasons = validation.reasons.join(' ');
  return validation.verdict === 'fail' ? reasons : `confidence ${validation.confidence?.toFixed(2)} is below ${CONFIDENCE_REVIEW}: ${reasons}`;
}

function repairsSoFar(conversation: StepConversation): number {
  return conversation.messages.filter((message) => message.role === 'user' && message.content.startsWith(REPAIR_PREFIX)).length;
}

/** Sends the step back to its model with the reason, in its own conversation, and tells the run's capabilities (recovery measures the gap); once the budget is spent, the step fails naming the last verdict. */
async function repair(context: RunContext, step: PlanStep, conversation: StepConversation, validation: StepValidation, unseen: string | null): Promise<StepOutcome | null> {
  const reason = reasonOf(validation);
  const done = repairsSoFar(conversation);
  if (done >= context.options.repairBudget) {
    return { status: 'failed', reason: `validation_failed: the result failed validation after ${done} repair(s); last verdict ${validation.verdict}: ${reason}` };
  }
  const repairNumber = done + 1;
  const shown = unseen === null ? '' : ` The result came from the planned call ${step.tool ?? ''}: ${capObservation(unseen, 4000)}`;
  conversation.push({ role: 'user', content: `${REPAIR_PREFIX} (repair ${repairNumber} of ${context.options.repairBudget}): ${reason}${shown} Fix the result and answer again.` });
  context.events.append(context.runId, 'step.retried', { stepId: step.id, repair: repairNumber, reason });
  await context.hooks.stepRepaired(context, step);
  return null;
}

function assessmentOf(validation: StepValidation | null): ResultAssessment {
  if (!validation) return { confidence: null, factors: [] };
  return { confidence: validation.confidence, factors: [`validation: ${validation.verdict}`, ...validation.reasons.map((reason) => `validator: ${reason}`)] };
}

/**
 * A step's answer before it counts as its result: the Agent-Validator checks it (unless
 * verification is off); a failure, or a confidence below the review band, is repaired; a confidence
 * in the band goes to a person, as does every result where the policy asks. Null sends the step
 * back to work, the reason already in its conversation (with the result itself when the model never
 * saw it: a planned call's).
 */
async function reviewResult(context: RunContext, step: PlanStep, { result, conversation, origin }: ReviewedAnswer): Promise<StepOutcome | null> {
  const validation = context.options.verification === 'off' ? null : await validateStep(context, step, result, conversation.messages);
  if (validation) {
    context.events.append(context.runId, 'validation.completed', { stepId: step.id, ...validation });
    publishCritique(context, step, validation);
  }
  const route = validation ? routeOf(context, validation) : 'accept';
  if (validation && route === 'repair') return repair(context, step, conversation, validation, origin === 'planned_call' ? result : null);
  const review = await reviewStepResult(context, step, result, assessmentOf(validation), route === 'ask');
  if (review.accepted) return { status: 'completed', result: review.result };
  conversation.push({ role: 'user', content: review.message });
  return null;
}

/** The Agent-Validator, its repairs and the result review: every step's answer, a sub-agent's too, before it counts. */
export const validation: RunCapability = {
  name: 'validation',
  hooks: { reviewResult },
};
