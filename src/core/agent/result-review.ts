import type { PlanStep } from '../../shared/schemas/plan';
import { reviewStepResult } from '../approval/checkpoints';
import type { RunContext } from './run-context';
import type { StepConversation } from './step-conversation';
import type { StepOutcome } from './step-executor';

/**
 * A step's answer before it counts as its result: a person reviews it where the policy asks. Null
 * sends the step back to work, the reason already in its conversation.
 */
export async function reviewResult(context: RunContext, step: PlanStep, result: string, conversation: StepConversation): Promise<StepOutcome | null> {
  const review = await reviewStepResult(context, step, result, { confidence: null, factors: [] });
  if (review.accepted) return { status: 'completed', result: review.result };
  conversation.push({ role: 'user', content: review.message });
  return null;
}
