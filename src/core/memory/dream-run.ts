import { randomUUID } from 'node:crypto';
import { ArchonError } from '../../shared/errors';
import { EstopTriggerSchema } from '../../shared/schemas/estop';
import type { RunOptions, RunStatus } from '../../shared/schemas/run';
import type { Settings } from '../../shared/schemas/settings';
import { type RunContext } from '../run/run-context';
import { combineHooks } from '../run/hooks';
import { callModel, recordServerRequest } from '../run/model-gate';
import { approvalExpiryMs, dayCaps } from '../run/run-options';
import { leaseRun } from '../run/run-lease';
import type { ApprovalChannel } from '../approval/approval-channel';
import { BudgetMeter, callCapsFor, startOfToday } from '../budget/budget-meter';
import { priceFor, settlePrice } from '../budget/pricing';
import { AgentBus } from '../bus/agent-bus';
import { contextWindowOf } from '../model/context-window';
import { RoleModels, type Connect } from '../roles/role-models';
import { RoleRegistry } from '../roles/role-registry';
import type { ArchonRuntime } from '../runtime';
import type { EmergencyStop } from '../stop/emergency-stop';
import { ToolRegistry } from '../tools/tool-registry';
import { dream, dreamInputs, type DreamInput, type DreamOutcome } from './dreamer';
import { ToolLocks } from '../run/tool-locks';
import { fenceNonce } from '../provenance/spotlight';

/** The role a dream's model calls are made as: the planner's (the run's own model; a dream has no roles file). */
const DREAMER_ROLE = 'planner';

export interface DreamRunDependencies {
  runtime: Pick<ArchonRuntime, 'store' | 'events' | 'log' | 'now'>;
  estop: EmergencyStop;
  /** Who answers the dream's approvals (a model call under `supervised`, a budget raise). */
  approvals: ApprovalChannel;
  connect: Connect;
  /** The model server and policy the dream runs with (a dream has no workspace or tools). */
  options: RunOptions;
  settings: Pick<Settings, 'dailyMaxTokens' | 'dailyMaxCostUsd' | 'modelPrices' | 'approvalExpirySeconds'>;
  newId?: () => string;
}

export interface DreamRunResult {
  /** Null when there was nothing to dream: no run was made and the model server was not asked. */
  runId: string | null;
  status: RunStatus;
  outcome: DreamOutcome;
  error: string | null;
}

const NOTHING: DreamOutcome = { runIds: [], stored: [], dropped: [], unreadable: null };

/** A dream's run as the code of any run sees it: no tools, no plan, no sub-agents, the day's budget, one signal. */
function dreamContext(deps: DreamRunDependencies, run: { runId: string; goal: string; options: RunOptions; connected: Awaited<ReturnType<Connect>> }, signal: AbortSignal): RunContext {
  const { runtime, settings } = deps;
  const { runs } = runtime.store;
  const controller = new AbortController();
  const registry = new RoleRegistry();
  const tools = new ToolRegistry([]);
  const price = priceFor(run.options.modelUrl, run.options.model, { prices: settings.modelPrices });
  const models = RoleModels.bind(registry, { options: run.options, probe: run.connected.probe, model: run.connected.model, price });
  const caps = { maxTokens: run.options.maxTokens, maxCostUsd: run.options.maxCostUsd, ...dayCaps(settings), ...callCapsFor(0, run.options.maxIterations) };
  const newId = deps.newId ?? randomUUID;
  return {
    runId: run.runId,
    goal: run.goal,
    options: run.options,
    policy: run.options.policy,
    mode: models.own.mode,
    dialect: null,
    signal: AbortSignal.any([signal, controller.signal, deps.estop.signal]),
    stopRun: (reason) => controller.abort(reason),
    tools,
    warmTools: () => undefined,
    lockedTools: new ToolLocks(),
    toolGrants: new Set(),
    model: models.own.model,
    contextWindow: contextWindowOf(run.connected.probe),
    role: DREAMER_ROLE,
    roles: { registry, models, tools },
    approvals: deps.approvals,
    toolApproval: {},
    expiryMs: approvalExpiryMs(settings),
    guardsInjection: true,
    budget: new BudgetMeter(caps, runs.spending(run.runId, startOfToday(runtime.now())), price),
    plan: null,
    hooks: combineHooks([]),
    capabilityStates: new Map(),
    memory: null,
    runs,
    events: runtime.events,
    subagents: {
      run: () => Promise.reject(new ArchonError('INTERNAL', 'A dream starts no sub-agents.')),
      acquireSlot: () => Promise.reject(new ArchonError('INTERNAL', 'A dream starts no sub-agents.')),
    },
    bus: new AgentBus(runs.busMessages, runtime.events, { now: runtime.now, newId }),
    log: runtime.log,
    replicate: () => Promise.resolve(),
    now: runtime.now,
    newId,
  };
}

function describeOutcome(outcome: DreamOutcome): string {
  return `Dreamt ${outcome.runIds.length} run(s): ${outcome.runIds.join(', ')}. Stored ${outcome.stored.length} lesson(s).`;
}

/** Writes the dream's end, then announces it (with its kind, for the auditor). */
function end(context: RunContext, status: RunStatus, outcome: DreamOutcome, text: { answer?: string; error?: string }): DreamRunResult {
  const { runId } = context;
  context.runs.setRunStatus(runId, status, context.now().toISOString(), text);
  if (status === 'completed') context.events.append(runId, 'run.completed', { answer: text.answer ?? '', kind: 'dream' });
  else if (status === 'stopped') context.events.append(runId, 'run.stopped', { reason: text.error ?? 'Stopped.', kind: 'dream' });
  else context.events.append(runId, 'run.failed', { error: text.error ?? 'The dream failed.', kind: 'dream' });
  context.events.flush();
  return { runId, status, outcome, error: text.error ?? null };
}

/** How a dream that did not finish ends: a stop (the emergency stop, `archon stop`, a pause) ends it stopped; it is never resumed. */
function endWithError(context: RunContext, error: unknown): DreamRunResult {
  const reason: unknown = context.signal.aborted ? context.signal.reason : error;
  if (ArchonError.isInstance(reason) && reason.code === 'ESTOP_LATCHED') {
    const details = reason.details as { triggeredBy?: unknown; reason?: string } | undefined;
    context.events.append(context.runId, 'estop.triggered', { triggeredBy: EstopTriggerSchema.catch('operator').parse(details?.triggeredBy), reason: details?.reason ?? reason.message });
  }
  const message = reason instanceof Error ? reason.message : String(reason);
  if (context.signal.aborted || (ArchonError.isInstance(reason) && (reason.code === 'CANCELLED' || reason.code === 'PAUSED'))) return end(context, 'stopped', NOTHING, { error: message });
  if (ArchonError.isInstance(reason) && reason.code === 'BUDGET_EXCEEDED') return end(context, 'budget_exhausted', NOTHING, { error: message });
  if (ArchonError.isInstance(reason) && reason.code === 'APPROVAL_REJECTED') return end(context, 'rejected', NOTHING, { error: message });
  return end(context, 'failed', NOTHING, { error: `${message} The runs stay undreamt; the next dream reads them again.` });
}

async function driveDream(context: RunContext, deps: DreamRunDependencies, inputs: readonly DreamInput[], probeRequests: Awaited<ReturnType<Connect>>['requests']): Promise<DreamRunResult> {
  const { store } = deps.runtime;
  try {
    for (const request of probeRequests ?? []) await recordServerRequest(context, request);
    store.runs.setRunStatus(context.runId, 'running', context.now().toISOString());
    const outcome = await dream({ dreams: store.dreams, memory: store.memory, chat: (request) => callModel(context, request, null), mode: context.mode, nonce: fenceNonce(context), now: context.now }, inputs);
    if (outcome.unreadable !== null) return end(context, 'failed', outcome, { error: `The model's lessons could not be read: ${outcome.unreadable} Nothing was stored; the next dream reads these runs again.` });
    return end(context, 'completed', outcome, { answer: describeOutcome(outcome) });
  } catch (error) {
    return endWithError(context, error);
  }
}

/**
 * Probes the server (afresh: an unreachable one is said at once, exit 2, not after a model call's retries) under the
 * stop's signal: a stop pressed meanwhile ends it as the stop (ESTOP_LATCHED), before any run is made.
 */
async function connectArmed(deps: DreamRunDependencies, signal: AbortSignal): Promise<Awaited<ReturnType<Connect>>> {
  const armed = deps.estop.taskSignal(signal);
  let connected: Awaited<ReturnType<Connect>>;
  try {
    connected = await deps.connect(deps.options, armed);
  } catch (error) {
    throw armed.aborted ? (armed.reason as unknown) : error;
  }
  deps.estop.assertArmed();
  return connected;
}

/**
 * A dream is a run of its own kind (`dream`): refused while the emergency stop is latched, listed
 * with the runs, leased (so `archon stop` reaches it), its events on its own log for the auditor,
 * and its model calls made through `callModel` like any run's: asked under `supervised`, checked
 * against the day's budget, each request a `model_calls` row. With nothing to dream, nothing is
 * made and the model server is not asked.
 */
export async function dreamRun(deps: DreamRunDependencies, signal: AbortSignal): Promise<DreamRunResult> {
  deps.estop.assertArmed();
  const { store, events, now } = deps.runtime;
  const inputs = dreamInputs(store.runs, store.dreams);
  if (inputs.length === 0) return { runId: null, status: 'completed', outcome: NOTHING, error: null };
  const connected = await connectArmed(deps, signal);
  const price = priceFor(deps.options.modelUrl, connected.probe.model, { prices: deps.settings.modelPrices });
  const options: RunOptions = { ...deps.options, model: connected.probe.model, price: settlePrice(price, { model: connected.probe.model, maxCostUsd: deps.options.maxCostUsd }) };
  const runId = (deps.newId ?? randomUUID)();
  const goal = `Learn lessons from ${inputs.length} finished run(s)`;
  store.runs.createRun({ id: runId, goal, policy: options.policy, options, now: now().toISOString(), kind: 'dream' });
  const lease = leaseRun(store.runs, runId);
  try {
    const context = dreamContext(deps, { runId, goal, options, connected }, signal);
    lease.onLost((error) => context.stopRun(error));
    lease.onControl((control) => context.stopRun(new ArchonError('CANCELLED', `${control.action === 'pause' ? 'Paused' : 'Stopped'} by ${control.by}; a dream is not resumed. The runs it was reading stay undreamt for the next dream.`)));
    events.append(runId, 'run.started', { goal, policy: options.policy, toolApproval: {}, kind: 'dream' });
    return await driveDream(context, deps, inputs, connected.requests);
  } finally {
    lease.release();
    events.forget(runId);
  }
}
