import type { StepOutcome } from '../run/plan-view';
import { ArchonError } from '../../shared/errors';
import type { PlanStep } from '../../shared/schemas/plan';
import { confirmCriticalStep } from '../approval/checkpoints';
import { stepAgentId } from '../../shared/schemas/bus';
import type { HandOffRequest } from '../bus/hand-off';
import { textProtocolInstructions } from '../model/text-protocol';
import { asStoreError } from '../store/open-database';
import { isRunLevel } from '../run/run-level';
import { availableTools, withRolePrompt, type RunContext } from '../run/run-context';
import { callModel } from '../run/model-gate';
import { compactIfNeeded } from './step-compaction';
import { StepConversation } from '../run/step-conversation';
import { actOn, guardFor, type AssistantMessage, type TurnOutcome } from './step-turn';
import { observationOf, runToolCall } from './tool-call';
import { capObservation } from '../model/observation';
import { dependencyFacts } from '../memory/working-memory';
import { fenceNonce, spotlightRule } from '../provenance/spotlight';
import { resultAsSeen } from '../provenance/step-provenance';
import { briefBackground } from './follow-up';

/** The coordinator's hand-off of a step to the agent that runs it, as the bus carries it. */
export function stepTask(step: PlanStep): HandOffRequest {
  const lines = [`Step ${step.id}: ${step.description}`, ...(step.expected_output ? [`Expected output: ${step.expected_output}`] : [])];
  return { from: 'coordinator', to: stepAgentId(step), body: lines.join('\n') };
}

function stepPrompt(context: RunContext): string {
  const base =
    "You carry out one step of a plan toward the operator's goal. Use the tools when they help; " +
    'call several at once when they do not depend on each other. When the step is done, reply with its result as plain text.\n\n' +
    spotlightRule(fenceNonce(context));
  return withRolePrompt(context, context.mode === 'native' ? base : `${base}\n\n${textProtocolInstructions(availableTools(context).specs())}`);
}

function stepBrief(context: RunContext, step: PlanStep, dependencyResults: ReadonlyMap<string, string>, memory: string | null): string {
  const background = briefBackground(context, memory).flatMap((part) => [part, '']);
  const lines = [...background, `Goal: ${context.goal}`, `Step ${step.id}: ${step.description}`];
  if (step.expected_output) lines.push(`Expected output: ${step.expected_output}`);
  if (dependencyResults.size > 0) {
    lines.push('Results of the steps this one depends on:');
    for (const [id, result] of dependencyResults) lines.push(`- ${id}: ${resultAsSeen(context, id, capObservation(result, 4000))}`);
  }
  const facts = dependencyFacts(context, [...dependencyResults.keys()]);
  if (facts.length > 0) lines.push('Facts those steps kept (working memory):', ...facts);
  return lines.join('\n');
}

/** A step whose plan names a tool and its arguments runs that call first; success is the result. */
async function directCall(context: RunContext, step: PlanStep, conversation: StepConversation): Promise<StepOutcome | null> {
  if (!step.tool || step.args === undefined || !conversation.isFresh) return null;
  const result = await runToolCall(context, step, step.tool, step.args, conversation.callId('direct', 0, { name: step.tool, args: step.args }));
  if (result.status === 'success') return context.hooks.reviewResult(context, step, { result: result.content, conversation, origin: 'planned_call' });
  conversation.push({ role: 'user', content: `The planned call ${step.tool} ${JSON.stringify(step.args)} gave: ${observationOf(result)}` });
  return null;
}

/** A turn's answer goes to review; a failure ends the step; otherwise the loop goes on. */
async function conclude(context: RunContext, step: PlanStep, conversation: StepConversation, turn: TurnOutcome): Promise<StepOutcome | null> {
  if (turn === null) return null;
  if (turn.kind === 'failed') return { status: 'failed', reason: turn.reason };
  return context.hooks.reviewResult(context, step, { result: turn.result, conversation, origin: 'model' });
}

/**
 * Compaction when the history needs it; a summary call that fails is logged and the step goes on
 * without compaction (false: not tried again), the context window's cutting keeping it in the context.
 */
async function compactOrCarryOn(context: RunContext, step: PlanStep, conversation: StepConversation): Promise<boolean> {
  try {
    await compactIfNeeded(context, step, conversation);
    return true;
  } catch (error) {
    if (context.signal.aborted || isRunLevel(error) || asStoreError(error)) throw error;
    context.log?.warn({ err: error, runId: context.runId, stepId: step.id }, 'the step\'s history could not be summarised; it goes on with the oldest observations cut instead');
    return false;
  }
}

/**
 * The ReAct loop for one step, bounded by the run's iteration cap: think (model call), act (tool
 * calls, several at once in native mode), observe, until the model answers without a tool call.
 * Every message is recorded as it is added; a resumed step continues from the last one, and a
 * reply whose calls were under way is acted on again, its recorded results fed back.
 */
export async function executeStep(context: RunContext, step: PlanStep, dependencyResults: ReadonlyMap<string, string>): Promise<StepOutcome> {
  const key = { runId: context.runId, stepId: step.id, attempt: context.runs.stepAttempt(context.runId, step.id) };
  // Recalled once, when the step's conversation starts; a resumed step keeps the brief it was given.
  const memory = context.runs.turns(key.runId, key.stepId, key.attempt).length === 0 ? await context.hooks.beforeStep(context, step) : null;
  const conversation = StepConversation.open(context.runs, key, () => [
    { role: 'system', content: stepPrompt(context) },
    { role: 'user', content: stepBrief(context, step, dependencyResults, memory) },
  ]);
  const pending = conversation.unansweredReply();
  const guard = guardFor(context, conversation, pending?.position ?? conversation.messages.length);
  try {
    if (conversation.isFresh) {
      const refused = await confirmCriticalStep(context, step);
      if (refused) return { status: 'failed', reason: refused };
    }
    const direct = await directCall(context, step, conversation);
    if (direct) return direct;
    if (pending) {
      const outcome = await conclude(context, step, conversation, await actOn(context, step, conversation, guard, pending));
      if (outcome) return outcome;
    }
    let compacting = true;
    for (let iteration = conversation.modelTurns(); iteration < context.options.maxIterations; iteration++) {
      context.signal.throwIfAborted();
      const tools = context.mode === 'native' ? availableTools(context).specs() : undefined;
      if (compacting) compacting = await compactOrCarryOn(context, step, conversation);
      const response = await callModel(context, { purpose: 'step', messages: conversation.sent(), tools: tools && tools.length > 0 ? tools : undefined }, step.id);
      const message: AssistantMessage = {
        role: 'assistant',
        content: response.content || null,
        toolCalls: context.mode === 'native' && response.toolCalls.length > 0 ? response.toolCalls : undefined,
        ...(context.mode === 'text' && response.reasoning ? { reasoning: response.reasoning } : {}),
      };
      context.hooks.afterModelTurn(context, step, response);
      const position = conversation.push(message);
      const outcome = await conclude(context, step, conversation, await actOn(context, step, conversation, guard, { message, position }));
      if (outcome) return outcome;
    }
    return { status: 'failed', reason: `iteration_cap: the step did not finish within ${context.options.maxIterations} model turns.` };
  } catch (error) {
    if (context.signal.aborted || isRunLevel(error)) throw error;
    const storeError = asStoreError(error);
    if (storeError) throw storeError;
    if (ArchonError.isInstance(error)) return { status: 'failed', reason: error.message };
    throw error;
  }
}
