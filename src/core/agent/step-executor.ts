import { ArchonError } from '../../shared/errors';
import type { PlanStep } from '../../shared/schemas/plan';
import type { ToolResult } from '../../shared/schemas/tool';
import { actionHash, applyLock, explain, runRejected } from '../approval/approval-gate';
import { decide } from '../approval/edit-loop';
import { asksAt, asksForTool } from '../../shared/policy';
import type { ChatMessage, ToolCallRequest } from '../model/chat';
import { observationMessage, parseTextReply, textProtocolInstructions } from '../model/text-protocol';
import { toolResult, type ToolDefinition } from '../tools/tool-registry';
import { availableTools, callModel, type RunContext } from './run-context';

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

type ToolDecision = { run: true; args: unknown } | { run: false; result: ToolResult };

/** Puts a call to a person when the policy (or the operator's per-tool setting) says so. */
async function approveToolCall(context: RunContext, step: PlanStep, tool: ToolDefinition, args: unknown): Promise<ToolDecision> {
  if (!asksForTool(context.policy, tool, context.toolApproval[tool.name])) return { run: true, args };
  const verdict = await decide(
    context,
    {
      kind: 'tool_call',
      stepId: step.id,
      summary: `${tool.unconfined ? 'unconfined (no OS sandbox) ' : ''}${tool.name} ${JSON.stringify(args)}`,
      action: { tool: tool.name, args },
      explanation: explain(context, {
        summary: `Step ${step.id} wants to call ${tool.name}.`,
        stepId: step.id,
        risk: tool.sideEffects === 'irreversible' ? 'high' : tool.sideEffects === 'reversible' ? 'medium' : 'low',
        factors: [`side effects: ${tool.sideEffects}`, tool.idempotent ? 'idempotent' : 'not idempotent'],
        reversibility: tool.sideEffects,
      }),
    },
    (edited) => {
      const prepared = context.tools.prepare(tool.name, edited);
      return prepared.ok ? { ok: true, value: prepared.args, action: { tool: tool.name, args: prepared.args } } : { ok: false, reason: prepared.result.content };
    },
  );
  if (verdict.verdict === 'approve') return { run: true, args };
  if (verdict.verdict === 'edit') return { run: true, args: verdict.value };
  if (verdict.verdict === 'lock') {
    applyLock(context, verdict.outcome.decision);
    return { run: false, result: toolResult('denied', `The operator did NOT approve this call, so it did not run, and locked a constraint for the rest of the run: never use ${verdict.outcome.decision.verdict === 'lock' ? verdict.outcome.decision.constraint.tool : tool.name}.`) };
  }
  if (verdict.stop) throw runRejected(`The operator stopped the run at a ${tool.name} call: ${verdict.feedback}`);
  return { run: false, result: toolResult('denied', `The operator did NOT approve this call, so it did not run. Their feedback: ${verdict.feedback} Try another way, or say in your result what could not be done.`) };
}

type Admission = { run: true; tool: ToolDefinition; args: unknown } | { run: false; result: ToolResult; tool?: ToolDefinition };

/** Whether a call may run, and with which arguments: not locked, valid, approved, within the tool-call cap. */
async function admitToolCall(context: RunContext, step: PlanStep, name: string, rawArgs: unknown): Promise<Admission> {
  if (context.lockedTools.has(name)) return { run: false, result: toolResult('denied', `The operator locked a constraint: never use ${name}. It did not run; use another way.`) };
  const prepared = availableTools(context).prepare(name, rawArgs);
  if (!prepared.ok) return { run: false, result: prepared.result };
  const decision = await approveToolCall(context, step, prepared.tool, prepared.args);
  if (!decision.run) return { run: false, result: decision.result, tool: prepared.tool };
  context.budget.countToolCall();
  return { run: true, tool: prepared.tool, args: decision.args };
}

/** One tool call: admitted first, recorded before it runs and after it ends. */
async function runToolCall(context: RunContext, step: PlanStep, name: string, rawArgs: unknown, callId: string): Promise<ToolResult> {
  const { runs, events, runId } = context;
  const admission = await admitToolCall(context, step, name, rawArgs);
  const args = admission.run ? admission.args : rawArgs;
  runs.startToolCall({ id: callId, runId, stepId: step.id, tool: name, args, sideEffects: admission.tool?.sideEffects ?? 'none', idempotent: admission.tool?.idempotent ?? true, now: context.now().toISOString() });
  events.append(runId, 'tool.started', { stepId: step.id, tool: name, callId, args });
  const result = admission.run ? await context.tools.execute(admission.tool, admission.args, { signal: context.signal, workspace: context.options.workspace, runId, stepId: step.id }) : admission.result;
  runs.finishToolCall(callId, result, context.now().toISOString());
  if (admission.run && result.status === 'denied') events.append(runId, 'tool.refused', { stepId: step.id, tool: name, callId, reason: capObservation(result.content, 2000) });
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

/** Supervised runs put every step's result to a person before it goes on; a rejection sends the step back to work. */
async function reviewResult(context: RunContext, step: PlanStep, result: string, messages: ChatMessage[]): Promise<StepOutcome | null> {
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
    messages.push({ role: 'user', content: 'The operator locked a constraint; the tools you may use changed. Finish the step again.' });
    return null;
  }
  if (verdict.stop) throw runRejected(`The operator stopped the run at the result of step ${step.id}: ${verdict.feedback}`);
  messages.push({ role: 'user', content: `The operator rejected this result: ${verdict.feedback} Continue the step and give a better result.` });
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
async function directCall(context: RunContext, step: PlanStep, messages: ChatMessage[]): Promise<StepOutcome | null> {
  if (!step.tool || step.args === undefined) return null;
  const result = await runToolCall(context, step, step.tool, step.args, context.newId());
  if (result.status === 'success') return reviewResult(context, step, result.content, messages);
  messages.push({ role: 'user', content: `The planned call ${step.tool} ${JSON.stringify(step.args)} gave: ${observationOf(result)}` });
  return null;
}

/** Errors that end the whole run rather than one step: a stop, an exhausted budget, a rejection that says stop. */
export function isRunLevel(error: unknown): boolean {
  if (!ArchonError.isInstance(error)) return false;
  if (error.code === 'BUDGET_EXCEEDED' || error.code === 'ESTOP_LATCHED' || error.code === 'CANCELLED') return true;
  return error.code === 'APPROVAL_REJECTED' && (error.details as { stop?: boolean } | undefined)?.stop === true;
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
    const refused = await confirmCriticalStep(context, step);
    if (refused) return refused;
    const direct = await directCall(context, step, messages);
    if (direct) return direct;
    for (let iteration = 0; iteration < context.options.maxIterations; iteration++) {
      context.signal.throwIfAborted();
      const tools = context.mode === 'native' ? availableTools(context).specs() : undefined;
      const response = await callModel(context, { purpose: 'step', messages, tools: tools && tools.length > 0 ? tools : undefined }, step.id);
      if (context.mode === 'native' && response.toolCalls.length === 0) {
        messages.push({ role: 'assistant', content: response.content });
        if (response.content.trim() === '') {
          messages.push({ role: 'user', content: "Your reply was empty. Give the step's result, or call a tool." });
          continue;
        }
        const reviewed = await reviewResult(context, step, response.content.trim(), messages);
        if (reviewed) return reviewed;
        continue;
      }
      messages.push({ role: 'assistant', content: response.content || null, toolCalls: context.mode === 'native' ? response.toolCalls : undefined });
      const outcome =
        context.mode === 'native'
          ? await nativeTurn(context, step, messages, guard, response.toolCalls)
          : await textTurn(context, step, messages, guard, response.content);
      if (outcome?.status === 'completed') {
        const reviewed = await reviewResult(context, step, outcome.result, messages);
        if (reviewed) return reviewed;
      } else if (outcome) return outcome;
    }
    return { status: 'failed', reason: `iteration_cap: the step did not finish within ${context.options.maxIterations} model turns.` };
  } catch (error) {
    if (context.signal.aborted || isRunLevel(error)) throw error;
    if (ArchonError.isInstance(error)) return { status: 'failed', reason: error.message };
    throw error;
  }
}
