import { ArchonError } from '../../shared/errors';
import type { PlanStep } from '../../shared/schemas/plan';
import type { ToolResult } from '../../shared/schemas/tool';
import { actionHash, requestApproval, toolCallNeedsApproval } from '../approval/approval-gate';
import type { ChatMessage, ToolCallRequest } from '../model/chat';
import { observationMessage, parseTextReply, textProtocolInstructions } from '../model/text-protocol';
import { toolResult } from '../tools/tool-registry';
import { callModel, type RunContext } from './run-context';

export type StepOutcome = { status: 'completed'; result: string } | { status: 'failed'; reason: string };

export const MAX_OBSERVATION_CHARS = 8000;
export const REPEAT_LIMIT = 3;

/** Long tool output is cut, and the model is told so. */
export function capObservation(text: string, limit = MAX_OBSERVATION_CHARS): string {
  if (text.length <= limit) return text;
  return `${text.slice(0, limit)}\n[truncated: ${text.length - limit} more characters not shown]`;
}

function observationOf(result: ToolResult): string {
  return capObservation(result.status === 'success' ? result.content : `${result.status}: ${result.content}`);
}

function stepPrompt(context: RunContext): string {
  const base =
    "You carry out one step of a plan toward the operator's goal. Use the tools when they help; " +
    'call several at once when they do not depend on each other. When the step is done, reply with its result as plain text.';
  return context.mode === 'native' ? base : `${base}\n\n${textProtocolInstructions(context.tools.specs())}`;
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

/** One tool call: validated, approved when it has side effects, recorded before and after it runs. */
async function runToolCall(context: RunContext, step: PlanStep, name: string, rawArgs: unknown, callId: string): Promise<ToolResult> {
  const { runs, events, runId } = context;
  const prepared = context.tools.prepare(name, rawArgs);
  const tool = prepared.ok ? prepared.tool : undefined;
  runs.startToolCall({ id: callId, runId, stepId: step.id, tool: name, args: rawArgs, sideEffects: tool?.sideEffects ?? 'none', idempotent: tool?.idempotent ?? true, now: context.now().toISOString() });
  events.append(runId, 'tool.started', { stepId: step.id, tool: name, callId, args: rawArgs });
  let result: ToolResult;
  if (!prepared.ok) result = prepared.result;
  else {
    const decision = !toolCallNeedsApproval(prepared.tool, context.toolApproval[name])
      ? ({ verdict: 'approve' } as const)
      : await requestApproval(context, { kind: 'tool_call', stepId: step.id, summary: `${name} ${JSON.stringify(prepared.args)}`, action: { tool: name, args: prepared.args } });
    result =
      decision.verdict === 'approve'
        ? await context.tools.execute(prepared.tool, prepared.args, { signal: context.signal, workspace: context.options.workspace, runId, stepId: step.id })
        : toolResult('denied', `The operator did NOT approve this call, so it did not run. Their feedback: ${decision.feedback} Try another way, or say in your result what could not be done.`);
  }
  runs.finishToolCall(callId, result, context.now().toISOString());
  events.append(runId, 'tool.completed', { stepId: step.id, tool: name, callId, status: result.status, content: capObservation(result.content, 2000) });
  return result;
}

function parseNativeArguments(call: ToolCallRequest): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: call.arguments.trim() === '' ? {} : JSON.parse(call.arguments) };
  } catch (error) {
    return { ok: false, error: `The arguments of ${call.name} were not valid JSON (${(error as Error).message}). Send the call again with a JSON object.` };
  }
}

async function nativeTurn(context: RunContext, step: PlanStep, messages: ChatMessage[], guard: RepetitionGuard, calls: ToolCallRequest[]): Promise<StepOutcome | null> {
  const parsed = calls.map((call) => ({ call, args: parseNativeArguments(call) }));
  for (const { call, args } of parsed) {
    if (args.ok && guard.isThirdRepeat(call.name, args.value)) return loopDetected(call.name);
  }
  const observations = await Promise.all(
    parsed.map(async ({ call, args }) => (args.ok ? observationOf(await runToolCall(context, step, call.name, args.value, context.newId())) : args.error)),
  );
  parsed.forEach(({ call }, index) => messages.push({ role: 'tool', toolCallId: call.id, content: observations[index] as string }));
  return null;
}

async function textTurn(context: RunContext, step: PlanStep, messages: ChatMessage[], guard: RepetitionGuard, content: string): Promise<StepOutcome | null> {
  const reply = parseTextReply(content);
  if (reply.kind === 'final') return { status: 'completed', result: reply.answer };
  if (reply.kind === 'invalid') {
    messages.push({ role: 'user', content: reply.error });
    return null;
  }
  if (guard.isThirdRepeat(reply.tool, reply.arguments)) return loopDetected(reply.tool);
  const result = await runToolCall(context, step, reply.tool, reply.arguments, context.newId());
  messages.push({ role: 'user', content: observationMessage(observationOf(result)) });
  return null;
}

/** A step whose plan names a tool and its arguments runs that call first; success is the result. */
async function directCall(context: RunContext, step: PlanStep, messages: ChatMessage[]): Promise<StepOutcome | null> {
  if (!step.tool || step.args === undefined) return null;
  const result = await runToolCall(context, step, step.tool, step.args, context.newId());
  if (result.status === 'success') return { status: 'completed', result: result.content };
  messages.push({ role: 'user', content: `The planned call ${step.tool} ${JSON.stringify(step.args)} gave: ${observationOf(result)}` });
  return null;
}

/**
 * The ReAct loop for one step, bounded by the run's iteration cap: think (model call), act (tool
 * calls, several at once in native mode), observe, until the model answers without a tool call.
 */
export async function executeStep(context: RunContext, step: PlanStep, dependencyResults: ReadonlyMap<string, string>): Promise<StepOutcome> {
  const messages: ChatMessage[] = [
    { role: 'system', content: stepPrompt(context) },
    { role: 'user', content: stepBrief(context, step, dependencyResults) },
  ];
  const guard = new RepetitionGuard();
  try {
    const direct = await directCall(context, step, messages);
    if (direct) return direct;
    for (let iteration = 0; iteration < context.options.maxIterations; iteration++) {
      context.signal.throwIfAborted();
      const tools = context.mode === 'native' ? context.tools.specs() : undefined;
      const response = await callModel(context, { purpose: 'step', messages, tools: tools && tools.length > 0 ? tools : undefined }, step.id);
      if (context.mode === 'native' && response.toolCalls.length === 0) {
        if (response.content.trim() !== '') return { status: 'completed', result: response.content.trim() };
        messages.push({ role: 'assistant', content: response.content }, { role: 'user', content: "Your reply was empty. Give the step's result, or call a tool." });
        continue;
      }
      messages.push({ role: 'assistant', content: response.content || null, toolCalls: context.mode === 'native' ? response.toolCalls : undefined });
      const outcome =
        context.mode === 'native'
          ? await nativeTurn(context, step, messages, guard, response.toolCalls)
          : await textTurn(context, step, messages, guard, response.content);
      if (outcome) return outcome;
    }
    return { status: 'failed', reason: `iteration_cap: the step did not finish within ${context.options.maxIterations} model turns.` };
  } catch (error) {
    if (context.signal.aborted) throw error;
    if (ArchonError.isInstance(error)) return { status: 'failed', reason: error.message };
    throw error;
  }
}
