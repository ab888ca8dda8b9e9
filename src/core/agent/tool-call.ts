import { capObservation } from '../model/observation';
import { FileEffectSchema } from '../../shared/schemas/file-effect';
import type { ToolRefusalCode } from '../../shared/schemas/events';
import type { PlanStep } from '../../shared/schemas/plan';
import type { ToolResult } from '../../shared/schemas/tool';
import { approvePossibleInjection, approveToolCall, confirmUncertainRepeat, type AllowedBy } from '../approval/checkpoints';
import { possibleInjection } from '../provenance/injection-guard';
import { fenced, fenceNonce } from '../provenance/spotlight';
import { resultSource } from '../provenance/step-provenance';
import { processStartTicks } from '../process/process-liveness';
import { asStoreError } from '../store/open-database';
import type { RecordedToolCall } from '../store/run-store';
import { toolResult, UNCERTAIN_OUTCOME, type ToolDefinition } from '../tools/tool-registry';
import { callElicitations } from '../mcp/elicitation';
import { availableTools, type RunContext } from '../run/run-context';

export function observationOf(result: ToolResult): string {
  return capObservation(result.status === 'success' ? result.content : `${result.status}: ${result.content}`);
}

/** What the model is shown of a call's result: untrusted content fenced and named (spotlighting), a failure's status outside the fence. */
export function observe(context: RunContext, call: { name: string; args: unknown }, result: ToolResult): string {
  const source = resultSource({ tool: call.name, args: call.args, result });
  if (source === null) return observationOf(result);
  const content = fenced(fenceNonce(context), source, capObservation(result.content));
  return result.status === 'success' ? content : `${result.status}: ${content}`;
}

export const OUTCOME_UNKNOWN =
  'Outcome unknown: this call started before Archon was interrupted and may or may not have happened; it was not run again. ' +
  'Check its effect first (for example read the file, or list the folder) and repeat it only if it did not happen.';

type RefusedBy = 'archon' | 'operator' | 'rule';

/** Why a call never started, who said no, and what the model is told. */
interface Refusal {
  code: ToolRefusalCode;
  by: RefusedBy;
  result: ToolResult;
  tool?: ToolDefinition;
}

type Admission = { run: true; tool: ToolDefinition; args: unknown; allowedBy: AllowedBy } | { run: false; refusal: Refusal };

const refused = (code: ToolRefusalCode, by: RefusedBy, result: ToolResult, tool?: ToolDefinition): Admission => ({ run: false, refusal: { code, by, result, ...(tool ? { tool } : {}) } });

/** Whether a call may run, and with which arguments: not locked, the role's, valid, not possibly injected or a person's yes to it, approved, within the tool-call cap. */
async function admitToolCall(context: RunContext, step: PlanStep, name: string, rawArgs: unknown, callId: string): Promise<Admission> {
  if (context.lockedTools.has(name)) return refused('locked', 'operator', toolResult('denied', `The operator locked a constraint: never use ${name}. It did not run; use another way.`));
  if (!context.tools.get(name) && context.roles.tools.get(name)) {
    return refused('not_allowed_for_role', 'archon', toolResult('denied', `The role "${context.role}" may not use ${name}; it did not run. Its tools: ${context.tools.names().join(', ') || 'none'}.`));
  }
  const tools = availableTools(context);
  const prepared = tools.prepare(name, rawArgs);
  if (!prepared.ok) return refused(tools.get(name) ? 'invalid_arguments' : 'unknown_tool', 'archon', prepared.result);
  const injection = context.guardsInjection ? await possibleInjection(context, step, prepared.tool, prepared.args) : null;
  const decision = injection
    ? await approvePossibleInjection(context, { stepId: step.id, callId, tool: prepared.tool, args: prepared.args }, injection)
    : await approveToolCall(context, step.id, prepared.tool, prepared.args);
  if (!decision.run) return refused(injection ? 'possible_injection' : 'rejected', context.approvals.rule ? 'rule' : 'operator', decision.result, prepared.tool);
  context.budget.countToolCall();
  return { run: true, tool: prepared.tool, args: decision.args, allowedBy: decision.allowedBy };
}

interface CallRecord {
  step: PlanStep;
  name: string;
  callId: string;
  args: unknown;
  allowedBy?: AllowedBy;
}

/**
 * A call the tool process is asked to run: recorded before it runs (durably when it has side effects)
 * and after it ends, announced as `tool.started` only now; its process groups are recorded as they start.
 */
async function journalled(context: RunContext, call: CallRecord & { tool: ToolDefinition }, outcome: () => Promise<ToolResult>): Promise<ToolResult> {
  const { runs, events, runId } = context;
  const { step, name, callId, args, tool, allowedBy } = call;
  await runs.startToolCall({ id: callId, runId, stepId: step.id, tool: name, args, sideEffects: tool.sideEffects, idempotent: tool.idempotent, definitionHash: tool.mcp?.definitionHash ?? null, allowedBy: allowedBy ?? null, executor: tool.executor ?? null, now: context.now().toISOString() });
  events.append(runId, 'tool.started', { stepId: step.id, tool: name, callId, args, sideEffects: tool.sideEffects });
  events.flush();
  await held(context, call);
  // What is recorded (secrets redacted) is what the model and the events see.
  const result = runs.finishToolCall({ runId, id: callId }, keepFileEffect(context, name, callId, withUncertainty(await outcome(), tool)), context.now().toISOString());
  if (result.status === 'denied') events.append(runId, 'tool.refused', { stepId: step.id, tool: name, callId, reason: capObservation(result.content, 2000), by: 'tool', code: 'outside_bounds' });
  const worker = typeof result.metadata.worker === 'string' ? { worker: result.metadata.worker } : {};
  events.append(runId, 'tool.completed', { stepId: step.id, tool: name, callId, status: result.status, content: capObservation(result.content, 2000), ...(result.parts ? { parts: result.parts } : {}), ...worker });
  return result;
}

/**
 * The call's start held where the run is held before it runs. When it cannot be, the call ends not
 * run, and the run stops here; so does a call whose run was stopped while it waited.
 */
async function held(context: RunContext, call: CallRecord): Promise<void> {
  try {
    await context.replicate(context.signal);
  } catch (error) {
    const stopped = context.signal.aborted;
    const why = stopped ? 'the run was stopped before it started' : error instanceof Error ? error.message : String(error);
    const result = context.runs.finishToolCall({ runId: context.runId, id: call.callId }, toolResult(stopped ? 'cancelled' : 'error', `It did not run: ${why}`), context.now().toISOString());
    context.events.append(context.runId, 'tool.completed', { stepId: call.step.id, tool: call.name, callId: call.callId, status: result.status, content: capObservation(result.content, 2000) });
    if (!stopped) context.stopRun(error);
    throw error;
  }
}

/** A call that never started: journalled with its refusal (fed back on resume), announced as `tool.refused` only; the model is told why. */
async function refuse(context: RunContext, call: CallRecord, refusal: Refusal): Promise<ToolResult> {
  const { runs, events, runId } = context;
  const { step, name, callId, args } = call;
  const tool = refusal.tool;
  await runs.startToolCall({ id: callId, runId, stepId: step.id, tool: name, args, sideEffects: tool?.sideEffects ?? 'none', idempotent: tool?.idempotent ?? true, now: context.now().toISOString() });
  const result = runs.finishToolCall({ runId, id: callId }, refusal.result, context.now().toISOString());
  events.append(runId, 'tool.refused', { stepId: step.id, tool: name, callId, reason: capObservation(result.content, 2000), by: refusal.by, code: refusal.code });
  return result;
}

/** An interrupted call not run again: its journal entry ends with the outcome unknown (its `tool.started` was announced when it began). */
function unknownOutcome(context: RunContext, call: CallRecord): ToolResult {
  const { runs, events, runId } = context;
  const result = runs.finishToolCall({ runId, id: call.callId }, toolResult('error', OUTCOME_UNKNOWN, { outcome: 'unknown' }), context.now().toISOString());
  events.append(runId, 'tool.completed', { stepId: call.step.id, tool: call.name, callId: call.callId, status: result.status, content: capObservation(result.content, 2000) });
  return result;
}

/**
 * Runs the call. One that began where it could not report (a worker that died under it) may have
 * happened: an idempotent one runs again, any other only on a person's word (`uncertain_repeat`),
 * once, under an id of its own; without it the outcome is unknown.
 */
async function execute(context: RunContext, step: PlanStep, tool: ToolDefinition, args: unknown, callId: string): Promise<ToolResult> {
  const first = await executeOnce(context, step, tool, args, callId);
  const uncertain = (result: ToolResult) => result.metadata.outcome === UNCERTAIN_OUTCOME;
  const repeat = uncertain(first) && (tool.idempotent || (await confirmUncertainRepeat(context, step.id, tool, args, callId, 'worker')));
  const result = repeat ? await executeOnce(context, step, tool, args, `${callId}.again`) : first;
  return uncertain(result) ? { ...result, metadata: { ...result.metadata, outcome: 'unknown' } } : result;
}

async function executeOnce(context: RunContext, step: PlanStep, tool: ToolDefinition, args: unknown, callId: string): Promise<ToolResult> {
  const elicitations = callElicitations(context, step);
  const result = await context.tools.execute(tool, args, {
    signal: context.signal,
    workspace: context.options.workspace,
    runId: context.runId,
    stepId: step.id,
    callId,
    elicit: elicitations.elicit,
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
  return elicitations.noted(result);
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
function withUncertainty(result: ToolResult, tool: ToolDefinition): ToolResult {
  const interrupted = result.status === 'cancelled' || result.status === 'timeout' || result.metadata.workerDied === true;
  if (tool.idempotent || !interrupted) return result;
  return toolResult(result.status, `${result.content}\nIt may have partly happened: check its effect before repeating it.`, { ...result.metadata, outcome: 'unknown' });
}

/**
 * A call that started and recorded no result: it may or may not have happened. One recorded as
 * idempotent, to the same definition, runs again, and one a Restate worker runs is asked again (its
 * invocation runs once whoever asks); otherwise a person decides (`uncertain_repeat`),
 * and without a yes the model is told the outcome is unknown.
 */
async function settleInterrupted(context: RunContext, step: PlanStep, name: string, recorded: RecordedToolCall, callId: string): Promise<ToolResult> {
  const { args } = recorded;
  const tool = availableTools(context).get(name);
  const call = { step, name, callId, args };
  // Recorded arguments had their secrets redacted: running them again would not repeat the same call.
  if (tool === undefined || JSON.stringify(args).includes('[redacted]')) return unknownOutcome(context, call);
  // What the call was when it started decides, not what the tool says it is now: a server may have redefined it.
  const sameDefinition = recorded.definitionHash === (tool.mcp?.definitionHash ?? null);
  // A call a cluster ran is asked of that same cluster again: it runs there once, whoever asks.
  const sameExecutor = tool.executor !== undefined && recorded.executor === tool.executor;
  if ((recorded.idempotent || sameExecutor) && sameDefinition) return journalled(context, { ...call, tool }, () => execute(context, step, tool, args, callId));
  if (await confirmUncertainRepeat(context, step.id, tool, args, callId)) return journalled(context, { ...call, tool, allowedBy: 'approval' }, () => execute(context, step, tool, args, callId));
  return unknownOutcome(context, call);
}

/**
 * One tool call under its stable id. A call the journal holds a result for is fed back, never run
 * again; an interrupted one is settled; a new one is admitted (locks, role, schema, approval, caps)
 * first, and only one admitted is started.
 */
export async function runToolCall(context: RunContext, step: PlanStep, name: string, rawArgs: unknown, callId: string): Promise<ToolResult> {
  const recorded = context.runs.toolCall(callId);
  if (recorded?.result) return recorded.result;
  if (recorded) return settleInterrupted(context, step, name, recorded, callId);
  const admission = await admitToolCall(context, step, name, rawArgs, callId);
  if (!admission.run) return refuse(context, { step, name, callId, args: rawArgs }, admission.refusal);
  const { tool, args, allowedBy } = admission;
  return journalled(context, { step, name, callId, args, tool, allowedBy }, () => execute(context, step, tool, args, callId));
}

/** A native call whose arguments are not JSON: it never starts; the model is told why (`error`). */
export async function refuseUnreadableCall(context: RunContext, step: PlanStep, call: { name: string; arguments: string; error: string }, callId: string): Promise<ToolResult> {
  const recorded = context.runs.toolCall(callId);
  if (recorded?.result) return recorded.result;
  return refuse(context, { step, name: call.name, callId, args: call.arguments }, { code: 'invalid_arguments', by: 'archon', result: toolResult('error', call.error) });
}
