import { ArchonError } from '../../shared/errors';
import type { PlanStep } from '../../shared/schemas/plan';
import { actionHash, applyLock, explain, runRejected } from '../approval/approval-gate';
import { decide } from '../approval/edit-loop';
import { asksAt } from '../../shared/policy';
import type { ChatMessage, ToolCallRequest } from '../model/chat';
import { observationMessage, parseTextReply, textProtocolInstructions } from '../model/text-protocol';
import { asStoreError } from '../store/open-database';
import { availableTools, callModel, noteDialect, type RunContext } from './run-context';
import { StepConversation } from './step-conversation';
import { capObservation, observationOf, runToolCall } from './tool-call';

export type StepOutcome = { status: 'completed'; result: string } | { status: 'failed'; reason: string };

export const REPEAT_LIMIT = 3;

type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;

function stepPrompt(context: RunContext): string {
  const base =
    "You carry out one step of a plan toward the operator's goal. Use the tools when they help; " +
    'call several at once when they do not depend on each other. When the step is done, reply with its result as plain text.';
  return context.mode === 'native' ? base : `${base}\n\n${textProtocolInstructions(availableTools(context).specs())}`;
}

function stepBrief(context: RunContext, step: PlanStep, dependencyResults: ReadonlyMap<string, string>): string {
  const lines = [`Goal: ${context.goal}`, `Step ${step.id}: ${step.description}`];
  if (step.expected_output) lines.push(`Expected output: ${step.expected_output}`);
  if (dependencyResults.size > 0) {
    lines.push('Results of the steps this one depends on:');
    for (const [id, result] of dependencyResults) lines.push(`- ${id}: ${capObservation(result, 4000)}`);
  }
  return lines.join('\n');
}

/** Counts identical calls (same tool, same arguments); the third one stops the step. */
class RepetitionGuard {
  private readonly counts = new Map<string, number>();

  isThirdRepeat(tool: string, args: unknown): boolean {
    const key = `${tool}:${actionHash(args)}`;
    const count = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, count);
    return count >= REPEAT_LIMIT;
  }
}

function loopDetected(tool: string): StepOutcome {
  return { status: 'failed', reason: `loop_detected: ${tool} was called ${REPEAT_LIMIT} times with the same arguments.` };
}

function parseNativeArguments(call: ToolCallRequest): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: call.arguments.trim() === '' ? {} : JSON.parse(call.arguments) };
  } catch (error) {
    return { ok: false, error: `The arguments of ${call.name} were not valid JSON (${(error as Error).message}). Send the call again with a JSON object.` };
  }
}

async function nativeTurn(context: RunContext, step: PlanStep, conversation: StepConversation, guard: RepetitionGuard, reply: { calls: ToolCallRequest[]; position: number }): Promise<StepOutcome | null> {
  const parsed = reply.calls.map((call) => ({ call, args: parseNativeArguments(call) }));
  for (const { call, args } of parsed) {
    if (args.ok && guard.isThirdRepeat(call.name, args.value)) return loopDetected(call.name);
  }
  const observations = await Promise.all(
    parsed.map(async ({ call, args }, index) => (args.ok ? observationOf(await runToolCall(context, step, call.name, args.value, conversation.callId(reply.position, index, { name: call.name, args: args.value }))) : args.error)),
  );
  parsed.forEach(({ call }, index) => conversation.push({ role: 'tool', toolCallId: call.id, content: observations[index] as string }));
  return null;
}

/** Text mode: the reply is read in Archon's format or the model's own dialect; its calls run one after another. */
async function textTurn(context: RunContext, step: PlanStep, conversation: StepConversation, guard: RepetitionGuard, reply: { message: AssistantMessage; position: number }): Promise<StepOutcome | null> {
  const parsed = parseTextReply(reply.message.content ?? '', { tools: availableTools(context).specs(), reasoning: reply.message.reasoning, dialect: context.dialect });
  if (parsed.kind === 'final') return { status: 'completed', result: parsed.answer };
  if (parsed.kind === 'invalid') {
    conversation.push({ role: 'user', content: parsed.error });
    return null;
  }
  noteDialect(context, parsed.dialect);
  const observations: string[] = [];
  for (const [index, call] of parsed.calls.entries()) {
    if (guard.isThirdRepeat(call.tool, call.arguments)) return loopDetected(call.tool);
    observations.push(observationOf(await runToolCall(context, step, call.tool, call.arguments, conversation.callId(reply.position, index, { name: call.tool, args: call.arguments }))));
  }
  conversation.push({ role: 'user', content: observations.map(observationMessage).join('\n') });
  return null;
}

/** Supervised runs put every step's result to a person before it goes on; a rejection sends the step back to work. */
async function reviewResult(context: RunContext, step: PlanStep, result: string, conversation: StepConversation): Promise<StepOutcome | null> {
  if (!asksAt(context.policy, 'step_result')) return { status: 'completed', result };
  const verdict = await decide(
    context,
    {
      kind: 'step_result',
      stepId: step.id,
      summary: `Result of step ${step.id}: ${result.slice(0, 300)}`,
      action: { stepId: step.id, result },
      explanation: explain(context, { summary: `Step ${step.id} finished; its result goes to the steps after it.`, stepId: step.id, risk: step.risk ?? 'low', factors: [], reversibility: 'not_applicable' }),
    },
    (edited) => (typeof edited === 'string' && edited.trim() !== '' ? { ok: true, value: edited, action: { stepId: step.id, result: edited } } : { ok: false, reason: 'An edited result must be non-empty text.' }),
  );
  if (verdict.verdict === 'approve') return { status: 'completed', result };
  if (verdict.verdict === 'edit') return { status: 'completed', result: verdict.value };
  if (verdict.verdict === 'lock') {
    applyLock(context, verdict.outcome.decision);
    conversation.push({ role: 'user', content: 'The operator locked a constraint; the tools you may use changed. Finish the step again.' });
    return null;
  }
  if (verdict.stop) throw runRejected(`The operator stopped the run at the result of step ${step.id}: ${verdict.feedback}`);
  conversation.push({ role: 'user', content: `The operator rejected this result: ${verdict.feedback} Continue the step and give a better result.` });
  return null;
}

/** A step the plan marks critical is a critical decision: asked before it starts, where the policy says so. */
async function confirmCriticalStep(context: RunContext, step: PlanStep): Promise<StepOutcome | null> {
  if (step.risk !== 'critical' || !asksAt(context.policy, 'critical_decision')) return null;
  const verdict = await decide(
    context,
    {
      kind: 'critical_decision',
      stepId: step.id,
      summary: `Critical step ${step.id}: ${step.description}`,
      action: { stepId: step.id, description: step.description, tool: step.tool ?? null, args: step.args ?? null },
      explanation: explain(context, { summary: `The plan marks step ${step.id} as critical.`, stepId: step.id, risk: 'critical', factors: ['marked critical by the plan'], reversibility: 'not_applicable' }),
    },
    () => ({ ok: false, reason: 'A critical step is approved or rejected; edit the plan instead.' }),
  );
  if (verdict.verdict === 'approve' || verdict.verdict === 'edit') return null;
  if (verdict.verdict === 'lock') {
    applyLock(context, verdict.outcome.decision);
    return null;
  }
  if (verdict.stop) throw runRejected(`The operator stopped the run at critical step ${step.id}: ${verdict.feedback}`);
  return { status: 'failed', reason: `The operator rejected this critical step: ${verdict.feedback}` };
}

/** A step whose plan names a tool and its arguments runs that call first; success is the result. */
async function directCall(context: RunContext, step: PlanStep, conversation: StepConversation): Promise<StepOutcome | null> {
  if (!step.tool || step.args === undefined || !conversation.isFresh) return null;
  const result = await runToolCall(context, step, step.tool, step.args, conversation.callId('direct', 0, { name: step.tool, args: step.args }));
  if (result.status === 'success') return reviewResult(context, step, result.content, conversation);
  conversation.push({ role: 'user', content: `The planned call ${step.tool} ${JSON.stringify(step.args)} gave: ${observationOf(result)}` });
  return null;
}

/** Acts on a reply of the model that is already recorded: runs its tool calls, or takes its text as the step's result. */
async function actOn(context: RunContext, step: PlanStep, conversation: StepConversation, guard: RepetitionGuard, reply: { message: AssistantMessage; position: number }): Promise<StepOutcome | null> {
  const content = reply.message.content ?? '';
  const calls = reply.message.toolCalls ?? [];
  if (context.mode === 'native' && calls.length > 0) return nativeTurn(context, step, conversation, guard, { calls, position: reply.position });
  if (context.mode === 'native') {
    if (content.trim() === '') {
      conversation.push({ role: 'user', content: "Your reply was empty. Give the step's result, or call a tool." });
      return null;
    }
    return reviewResult(context, step, content.trim(), conversation);
  }
  const outcome = await textTurn(context, step, conversation, guard, reply);
  return outcome?.status === 'completed' ? reviewResult(context, step, outcome.result, conversation) : outcome;
}

const RUN_LEVEL_CODES = new Set(['BUDGET_EXCEEDED', 'ESTOP_LATCHED', 'CANCELLED', 'MODEL_UNAVAILABLE', 'DISK_FULL', 'RUN_LEASED']);

/** Errors that end the whole run rather than one step: a stop, an exhausted budget, an outage that pauses it, a rejection that says stop. */
export function isRunLevel(error: unknown): boolean {
  if (!ArchonError.isInstance(error)) return false;
  if (RUN_LEVEL_CODES.has(error.code)) return true;
  return error.code === 'APPROVAL_REJECTED' && (error.details as { stop?: boolean } | undefined)?.stop === true;
}

/** The calls the model already made in this conversation count toward the repeat limit after a resume. */
function guardFor(context: RunContext, conversation: StepConversation, upTo: number): RepetitionGuard {
  const guard = new RepetitionGuard();
  for (const message of conversation.messages.slice(0, upTo)) {
    if (message.role !== 'assistant') continue;
    for (const call of message.toolCalls ?? []) {
      const args = parseNativeArguments(call);
      if (args.ok) guard.isThirdRepeat(call.name, args.value);
    }
    const text = message.toolCalls?.length ? null : parseTextReply(message.content ?? '', { tools: context.tools.specs(), reasoning: message.reasoning });
    if (text?.kind === 'action') for (const call of text.calls) guard.isThirdRepeat(call.tool, call.arguments);
  }
  return guard;
}

/**
 * The ReAct loop for one step, bounded by the run's iteration cap: think (model call), act (tool
 * calls, several at once in native mode), observe, until the model answers without a tool call.
 * Every message is recorded as it is added; a resumed step continues from the last one, and a
 * reply whose calls were under way is acted on again, its recorded results fed back.
 */
export async function executeStep(context: RunContext, step: PlanStep, dependencyResults: ReadonlyMap<string, string>): Promise<StepOutcome> {
  const conversation = StepConversation.open(context.runs, { runId: context.runId, stepId: step.id, attempt: context.runs.stepAttempt(context.runId, step.id) }, () => [
    { role: 'system', content: stepPrompt(context) },
    { role: 'user', content: stepBrief(context, step, dependencyResults) },
  ]);
  const pending = conversation.unansweredReply();
  const guard = guardFor(context, conversation, pending?.position ?? conversation.messages.length);
  try {
    if (conversation.isFresh) {
      const refused = await confirmCriticalStep(context, step);
      if (refused) return refused;
    }
    const direct = await directCall(context, step, conversation);
    if (direct) return direct;
    if (pending) {
      const outcome = await actOn(context, step, conversation, guard, pending);
      if (outcome) return outcome;
    }
    for (let iteration = conversation.modelTurns(); iteration < context.options.maxIterations; iteration++) {
      context.signal.throwIfAborted();
      const tools = context.mode === 'native' ? availableTools(context).specs() : undefined;
      const response = await callModel(context, { purpose: 'step', messages: conversation.messages, tools: tools && tools.length > 0 ? tools : undefined }, step.id);
      const message: AssistantMessage = {
        role: 'assistant',
        content: response.content || null,
        toolCalls: context.mode === 'native' && response.toolCalls.length > 0 ? response.toolCalls : undefined,
        ...(context.mode === 'text' && response.reasoning ? { reasoning: response.reasoning } : {}),
      };
      const position = conversation.push(message);
      const outcome = await actOn(context, step, conversation, guard, { message, position });
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
