import { FileEffectSchema } from '../../shared/schemas/file-effect';
import type { PlanStep } from '../../shared/schemas/plan';
import type { ToolResult } from '../../shared/schemas/tool';
import { approveToolCall, confirmUncertainRepeat, type AllowedBy } from '../approval/checkpoints';
import { processStartTicks } from '../process/process-liveness';
import { asStoreError } from '../store/open-database';
import type { RecordedToolCall } from '../store/run-store';
import { toolResult, type ToolDefinition } from '../tools/tool-registry';
import { askOperator } from '../mcp/elicitation';
import { availableTools, type RunContext } from './run-context';

/** Long tool output is cut, and the model is told so. */
export const MAX_OBSERVATION_CHARS = 8000;

export function capObservation(text: string, limit = MAX_OBSERVATION_CHARS): string {
  if (text.length <= limit) return text;
  return `${text.slice(0, limit)}\n[truncated: ${text.length - limit} more characters not shown]`;
}

export function observationOf(result: ToolResult): string {
  return capObservation(result.status === 'success' ? result.content : `${result.status}: ${result.content}`);
}

export const OUTCOME_UNKNOWN =
  'Outcome unknown: this call started before Archon was interrupted and may or may not have happened; it was not run again. ' +
  'Check its effect first (for example read the file, or list the folder) and repeat it only if it did not happen.';

/** `byOperator`: the operator refused it (a lock, or a rejection at its approval), so it never started. */
type Admission = { run: true; tool: ToolDefinition; args: unknown; allowedBy: AllowedBy } | { run: false; result: ToolResult; tool?: ToolDefinition; byOperator: boolean };

/** Whether a call may run, and with which arguments: not locked, valid, approved, within the tool-call cap. */
async function admitToolCall(context: RunContext, step: PlanStep, name: string, rawArgs: unknown): Promise<Admission> {
  if (context.lockedTools.has(name)) return { run: false, result: toolResult('denied', `The operator locked a constraint: never use ${name}. It did not run; use another way.`), byOperator: true };
  if (!context.tools.get(name) && context.roles.tools.get(name)) {
    return { run: false, result: toolResult('denied', `The role "${context.role}" may not use ${name}; it did not run. Its tools: ${context.tools.names().join(', ') || 'none'}.`), byOperator: false };
  }
  const prepared = availableTools(context).prepare(name, rawArgs);
  if (!prepared.ok) return { run: false, result: prepared.result, byOperator: false };
  const decision = await approveToolCall(context, step.id, prepared.tool, prepared.args);
  if (!decision.run) return { run: false, result: decision.result, tool: prepared.tool, byOperator: true };
  context.budget.countToolCall();
  return { run: true, tool: prepared.tool, args: decision.args, allowedBy: decision.allowedBy };
}

interface CallRecord {
  step: PlanStep;
  name: string;
  callId: string;
  args: unknown;
  tool?: ToolDefinition;
  /** It reached the tool (a refusal then came from the tool's own confinement, which the auditor flags). */
  executed: boolean;
  allowedBy?: AllowedBy;
}

/** Recorded before it runs (durably when it has side effects) and after it ends; its process groups are recorded as they start. */
async function journalled(context: RunContext, call: CallRecord, outcome: () => Promise<ToolResult>): Promise<ToolResult> {
  const { runs, events, runId } = context;
  const { step, name, callId, args, tool, executed, allowedBy } = call;
  await runs.startToolCall({ id: callId, runId, stepId: step.id, tool: name, args, sideEffects: tool?.sideEffects ?? 'none', idempotent: tool?.idempotent ?? true, definitionHash: tool?.mcp?.definitionHash ?? null, allowedBy: allowedBy ?? null, now: context.now().toISOString() });
  events.append(runId, 'tool.started', { stepId: step.id, tool: name, callId, args, ...(tool ? { sideEffects: tool.sideEffects } : {}) });
  // What is recorded (secrets redacted) is what the model and the events see.
  const result = runs.finishToolCall({ runId, id: callId }, keepFileEffect(context, name, callId, withUncertainty(await outcome(), tool, executed)), context.now().toISOString());
  if (executed && result.status === 'denied') events.append(runId, 'tool.refused', { stepId: step.id, tool: name, callId, reason: capObservation(result.content, 2000) });
  events.append(runId, 'tool.completed', { stepId: step.id, tool: name, callId, status: result.status, content: capObservation(result.content, 2000), ...(result.parts ? { parts: result.parts } : {}) });
  return result;
}

/** A call the operator refused never started: journalled with its refusal (fed back on resume), announced as `tool.refused` only. */
async function refusedByOperator(context: RunContext, call: CallRecord, refusal: ToolResult): Promise<ToolResult> {
  const { runs, events, runId } = context;
  const { step, name, callId, args, tool } = call;
  await runs.startToolCall({ id: callId, runId, stepId: step.id, tool: name, args, sideEffects: tool?.sideEffects ?? 'none', idempotent: tool?.idempotent ?? true, now: context.now().toISOString() });
  const result = runs.finishToolCall({ runId, id: callId }, refusal, context.now().toISOString());
  events.append(runId, 'tool.refused', { stepId: step.id, tool: name, callId, reason: capObservation(result.content, 2000), by: 'operator' });
  return result;
}

function execute(context: RunContext, step: PlanStep, tool: ToolDefinition, args: unknown, callId: string): Promise<ToolResult> {
  return context.tools.execute(tool, args, {
    signal: context.signal,
    workspace: context.options.workspace,
    runId: context.runId,
    stepId: step.id,
    elicit: (request, signal) => askOperator(context, step, request, signal),
    onSpawn: (pgid) => {
      try {
        context.runs.recordToolProcess({ runId: context.runId, callId, pgid, startTicks: processStartTicks(pgid) });
      } catch (error) {
        // Unrecorded, a process could outlive a crash unseen: the run stops here rather than go on blind.
        context.log?.error({ err: error, runId: context.runId, callId }, 'a tool process group could not be recorded');
        context.stopRun(asStoreError(error) ?? error);
      }
    },
  });
}

/**
 * A write reports what it replaced: that goes to the file-effect journal (for undo) before the call
 * is announced, and the previous content is not copied into the call's result.
 */
function keepFileEffect(context: RunContext, name: string, callId: string, result: ToolResult): ToolResult {
  const parsed = FileEffectSchema.safeParse(result.metadata.effect);
  if (name !== 'write_file' || result.status !== 'success' || !parsed.success) return result;
  context.runs.fileEffects.record(context.runId, callId, parsed.data);
  const { previousBase64: _kept, ...effect } = parsed.data;
  return { ...result, metadata: { ...result.metadata, effect } };
}

/** A call with side effects that was stopped, timed out or lost its worker may have partly happened: the model is told to check. */
function withUncertainty(result: ToolResult, tool: ToolDefinition | undefined, executed: boolean): ToolResult {
  const interrupted = result.status === 'cancelled' || result.status === 'timeout' || result.metadata.workerDied === true;
  if (!executed || !tool || tool.idempotent || !interrupted) return result;
  return toolResult(result.status, `${result.content}\nIt may have partly happened: check its effect before repeating it.`, { ...result.metadata, outcome: 'unknown' });
}

/**
 * A call that started and recorded no result: it may or may not have happened. One recorded as
 * idempotent, to the same definition, runs again; otherwise a person decides (`uncertain_repeat`),
 * and without a yes the model is told the outcome is unknown.
 */
async function settleInterrupted(context: RunContext, step: PlanStep, name: string, recorded: RecordedToolCall, callId: string): Promise<ToolResult> {
  const { args } = recorded;
  const tool = availableTools(context).get(name);
  const call = { step, name, callId, args, tool, executed: true };
  // Recorded arguments had their secrets redacted: running them again would not repeat the same call.
  const repeatable = tool !== undefined && !JSON.stringify(args).includes('[redacted]');
  if (!repeatable) return journalled(context, { ...call, executed: false }, async () => toolResult('error', OUTCOME_UNKNOWN, { outcome: 'unknown' }));
  // What the call was when it started decides, not what the tool says it is now: a server may have redefined it.
  const sameDefinition = recorded.definitionHash === (tool.mcp?.definitionHash ?? null);
  if (recorded.idempotent && sameDefinition) return journalled(context, call, () => execute(context, step, tool, args, callId));
  if (await confirmUncertainRepeat(context, step.id, tool, args, callId)) return journalled(context, { ...call, allowedBy: 'approval' }, () => execute(context, step, tool, args, callId));
  return journalled(context, { ...call, executed: false }, async () => toolResult('error', OUTCOME_UNKNOWN, { outcome: 'unknown' }));
}

/**
 * One tool call under its stable id. A call the journal holds a result for is fed back, never run
 * again; an interrupted one is settled; a new one is admitted (locks, schema, approval, caps) first.
 */
export async function runToolCall(context: RunContext, step: PlanStep, name: string, rawArgs: unknown, callId: string): Promise<ToolResult> {
  const recorded = context.runs.toolCall(callId);
  if (recorded?.result) return recorded.result;
  if (recorded) return settleInterrupted(context, step, name, recorded, callId);
  const admission = await admitToolCall(context, step, name, rawArgs);
  if (!admission.run && admission.byOperator) return refusedByOperator(context, { step, name, callId, args: rawArgs, tool: admission.tool, executed: false }, admission.result);
  const call = { step, name, callId, args: admission.run ? admission.args : rawArgs, tool: admission.tool, executed: admission.run, ...(admission.run ? { allowedBy: admission.allowedBy } : {}) };
  return journalled(context, call, async () => (admission.run ? execute(context, step, admission.tool, admission.args, callId) : admission.result));
}
