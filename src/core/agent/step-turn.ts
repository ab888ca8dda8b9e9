import type { PlanStep } from '../../shared/schemas/plan';
import { actionHash } from '../approval/approval-gate';
import type { ChatMessage, ToolCallRequest } from '../model/chat';
import { isObservation, observationMessage, parseTextReply } from '../model/text-protocol';
import { availableTools, noteDialect, type RunContext } from '../run/run-context';
import type { StepConversation } from '../run/step-conversation';
import { observe, refuseUnreadableCall, runToolCall } from './tool-call';

/*
 * One turn of a step: acting on a recorded reply of the model. Its tool calls run and their
 * observations are recorded; a reply without calls is the step's answer.
 */

export const REPEAT_LIMIT = 3;

export type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;

/** What a turn came to: an answer to review, a failure, or null to ask the model again. */
export type TurnOutcome = { kind: 'answer'; result: string } | { kind: 'failed'; reason: string } | null;

/** Counts identical calls (same tool, same arguments); the third one stops the step. */
export class RepetitionGuard {
  private readonly counts = new Map<string, number>();

  isThirdRepeat(tool: string, args: unknown): boolean {
    const key = `${tool}:${actionHash(args)}`;
    const count = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, count);
    return count >= REPEAT_LIMIT;
  }
}

function loopDetected(tool: string): TurnOutcome {
  return { kind: 'failed', reason: `loop_detected: ${tool} was called ${REPEAT_LIMIT} times with the same arguments.` };
}

function parseNativeArguments(call: ToolCallRequest): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: call.arguments.trim() === '' ? {} : JSON.parse(call.arguments) };
  } catch (error) {
    return { ok: false, error: `The arguments of ${call.name} were not valid JSON (${(error as Error).message}). Send the call again with a JSON object.` };
  }
}

async function nativeTurn(context: RunContext, step: PlanStep, conversation: StepConversation, guard: RepetitionGuard, reply: { calls: ToolCallRequest[]; position: number }): Promise<TurnOutcome> {
  const parsed = reply.calls.map((call) => ({ call, args: parseNativeArguments(call) }));
  for (const { call, args } of parsed) {
    if (args.ok && guard.isThirdRepeat(call.name, args.value)) return loopDetected(call.name);
  }
  const observations = await Promise.all(
    parsed.map(async ({ call, args }, index) => {
      const callId = conversation.callId(reply.position, index, { name: call.name, args: args.ok ? args.value : call.arguments });
      const result = args.ok ? await runToolCall(context, step, call.name, args.value, callId) : await refuseUnreadableCall(context, step, { name: call.name, arguments: call.arguments, error: args.error }, callId);
      return observe(context, { name: call.name, args: args.ok ? args.value : call.arguments }, result);
    }),
  );
  parsed.forEach(({ call }, index) => conversation.push({ role: 'tool', toolCallId: call.id, content: observations[index] as string }));
  return null;
}

/** Text mode: the reply is read in Archon's format or the model's own dialect; its calls run one after another. */
async function textTurn(context: RunContext, step: PlanStep, conversation: StepConversation, guard: RepetitionGuard, reply: { message: AssistantMessage; position: number }): Promise<TurnOutcome> {
  const afterObservation = conversation.sent().some(isObservation);
  const parsed = parseTextReply(reply.message.content ?? '', { tools: availableTools(context).specs(), reasoning: reply.message.reasoning, dialect: context.dialect, afterObservation });
  if (parsed.kind === 'final') return { kind: 'answer', result: parsed.answer };
  if (parsed.kind === 'invalid') {
    conversation.push({ role: 'user', content: parsed.error });
    return null;
  }
  noteDialect(context, parsed.dialect);
  const observations: string[] = [];
  for (const [index, call] of parsed.calls.entries()) {
    if (guard.isThirdRepeat(call.tool, call.arguments)) return loopDetected(call.tool);
    const result = await runToolCall(context, step, call.tool, call.arguments, conversation.callId(reply.position, index, { name: call.tool, args: call.arguments }));
    observations.push(observe(context, { name: call.tool, args: call.arguments }, result));
  }
  conversation.push({ role: 'user', content: observations.map(observationMessage).join('\n') });
  return null;
}

/** Acts on a reply of the model that is already recorded: runs its tool calls, or takes its text as the step's answer. */
export async function actOn(context: RunContext, step: PlanStep, conversation: StepConversation, guard: RepetitionGuard, reply: { message: AssistantMessage; position: number }): Promise<TurnOutcome> {
  const content = reply.message.content ?? '';
  const calls = reply.message.toolCalls ?? [];
  if (context.mode === 'native' && calls.length > 0) return nativeTurn(context, step, conversation, guard, { calls, position: reply.position });
  if (context.mode === 'native') {
    if (content.trim() === '') {
      conversation.push({ role: 'user', content: "Your reply was empty. Give the step's result, or call a tool." });
      return null;
    }
    return { kind: 'answer', result: content.trim() };
  }
  return textTurn(context, step, conversation, guard, reply);
}

/** The calls the model already made in this conversation count toward the repeat limit after a resume. */
export function guardFor(context: RunContext, conversation: StepConversation, upTo: number): RepetitionGuard {
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
