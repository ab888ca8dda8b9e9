import { randomUUID } from 'node:crypto';
import { ArchonError } from '../../shared/errors';
import type { ApprovalKind } from '../../shared/schemas/approval';
import { EstopTriggerSchema } from '../../shared/schemas/estop';
import type { Plan } from '../../shared/schemas/plan';
import type { ModelPrice, Policy, RunOptions, RunStatus, StepStatus } from '../../shared/schemas/run';
import type { ToolApprovalOverride } from '../../shared/schemas/settings';
import type { ApprovalChannel } from '../approval/approval-channel';
import { measureAutonomySignals, TRUST_WINDOW } from '../approval/autonomy-signals';
import { approveFinalAnswer, approvePlan, confirmRerun } from '../approval/checkpoints';
import { inheritLocks } from '../approval/approval-gate';
import { announcePlanVerdict } from '../planner/meta-validator';
import { adaptPolicy } from '../approval/policy';
import { BudgetMeter, callCapsFor, startOfToday, type BudgetCaps } from '../budget/budget-meter';
import { AgentBus } from '../bus/agent-bus';
import { handOff, planningTask } from '../bus/hand-off';
import { priceFor, settlePrice, type Price } from '../budget/pricing';
import type { RunEventLog } from '../events/run-event-log';
import type { Log } from '../log';
import { DIALECT_NAMES, type DialectName } from '../model/dialects/dialect-names';
import { CAP_NAMES, type CapName } from '../../shared/budget-cap';
import { runStateOf } from '../../shared/run-state';
import { Slots } from '../run/slots';
import { ToolLocks } from '../run/tool-locks';
import { MAX_SUBAGENT_DEPTH } from '../../shared/schemas/roles';
import { asStoreError } from '../store/open-database';
import type { ModelClient } from '../model/chat';
import type { EndpointProbe } from '../../shared/schemas/endpoint';
import { planIndex } from '../../shared/plan-graph';
import { planGoal } from '../planner/planner';
import { planStepCap } from '../planner/validate-plan';
import type { EmergencyStop } from '../stop/emergency-stop';
import type { RunStore, StoredStep } from '../store/run-store';
import type { ToolRegistry } from '../tools/tool-registry';
import { holdWorkspace, pinOf, pinWorkspace } from '../tools/workspace-pin';
import { asRole, fitCallCaps, noteDialect, resumeAdvice, type ChildRunRequest, type RunCapability, type RunContext, type SubagentHost } from '../run/run-context';
import { combineHooks } from '../run/hooks';
import { announceServerRequest, callModel, recordServerRequest, serverRequestRow } from '../run/model-gate';
import { RoleModels } from '../roles/role-models';
import type { ConnectSession } from '../model/connect';
import type { ServerRequest } from '../model/server-request';
import { DEFAULT_STEP_ROLE, RoleRegistry } from '../roles/role-registry';
import { runPlan } from './scheduler';
import { killOrphans } from './orphans';
import { LEASE_WAIT_MS, leaseRun, leaseRunWhenFree, type RunLease } from '../run/run-lease';
import { runControlError } from './run-control';
import { executeStep, stepTask } from './step-executor';
import { describeOutcome, type Recover, type StepState } from '../run/plan-view';
import { briefBackground, earlierRunBrief } from './follow-up';
import { fenceNonce } from '../provenance/spotlight';
import { contextWindowOf } from '../model/context-window';
import { endWorkingMemory } from '../memory/working-memory';
import type { MemoryStore } from '../memory/memory-store';
import type { Embedder } from '../model/embedder';
import { RunMemory } from '../memory/recall';
import { contractOf } from '../contract/contract-state';
import { planCoveringContract } from '../contract/plan-coverage';

export const DEFAULT_MAX_SUBAGENTS = 2;

export interface RunEngineDependencies {
  /** Told once a new run's row exists: a host that started it shows it from then on. */
  onCreated?(runId: string): void;
  runs: RunStore;
  events: RunEventLog;
  /** The tools a run may use, for its options (its workspace above all); MCP servers are started here. */
  tools(options: RunOptions, signal: AbortSignal): ToolRegistry | Promise<ToolRegistry>;
  approvals: ApprovalChannel;
  toolApproval?: Readonly<Record<string, ToolApprovalOverride>>;
  expiryMs?: Partial<Record<ApprovalKind, number>>;
  /** Caps beyond the run's own options: per day, and the runaway guards. */
  caps?: Partial<Pick<BudgetCaps, 'dayMaxTokens' | 'dayMaxCostUsd'>>;
  /** Settings.maxPlanSteps: a new run's step cap when its options name none. */
  maxPlanSteps?: number;
  estop?: EmergencyStop;
  /** How many sub-agent runs of a top-level run run at once (Settings.maxSubagents). */
  maxSubagents?: number;
  /** The agent bus, when a host shares one between runs (a parent and its sub-agents); else each run gets its own over the same store. */
  agentBus?: AgentBus;
  /** Model prices the operator set (Settings), and a price for this run's model (a flag), which wins. */
  modelPrices?: Readonly<Record<string, ModelPrice>>;
  price?: ModelPrice | null;
  /**
   * Probes the endpoint (or takes the session's cached probe) and returns a client for the model it
   * settled on, an embedder for vector recall, and every request the probe sent (recorded with the run).
   */
  connect(options: RunOptions, signal: AbortSignal, session?: ConnectSession): Promise<{ probe: EndpointProbe; model: ModelClient; embedder?: Embedder | null; requests?: readonly ServerRequest[] }>;
  /** Starts tool workers for `count` calls at once ahead of need (capped by the host); a stop of `signal` ends the warming. */
  warmTools?(count: number, signal: AbortSignal): void;
  /** Long-term memory; absent when Settings turn memory off. */
  memory?: MemoryStore;
  /** The capabilities a run with these options has (src/core/capabilities.ts lists them). */
  capabilities(options: RunOptions): readonly RunCapability[];
  /** False only where the injection defence itself is measured (`npm run bench`): no host turns it off. */
  guardsInjection?: boolean;
  now?: () => Date;
  newId?: () => string;
  log?: Log;
  /** The Restate worker driving the run (a scheduled run): each step it starts names it. */
  worker?: string;
  /** Holds what the run wrote beyond this machine before each of its calls leaves (the run a worker drives, on its cluster). */
  replicate?(signal: AbortSignal): Promise<void>;
}

export interface RunResult {
  runId: string;
  status: RunStatus;
  answer: string | null;
  error: string | null;
}

function finish(context: RunContext, status: RunStatus, outcome: { answer?: string; error?: string; gaps?: readonly string[] }): RunResult {
  context.runs.setRunStatus(context.runId, status, context.now().toISOString(), outcome);
  endWorkingMemory(context, status);
  if (status === 'completed') context.events.append(context.runId, 'run.completed', { answer: outcome.answer ?? '' });
  else if (status === 'completed_with_gaps') context.events.append(context.runId, 'run.completed', { answer: outcome.answer ?? '', gaps: [...(outcome.gaps ?? [])] });
  else if (status === 'stopped') context.events.append(context.runId, 'run.stopped', { reason: outcome.error ?? 'Stopped.' });
  else if (status === 'paused') context.events.append(context.runId, 'run.paused', { reason: outcome.error ?? 'Paused.', whatToDo: `When the cause is fixed, continue it with \`archon resume ${context.runId}\` (or Resume in the app).` });
  else context.events.append(context.runId, 'run.failed', { error: outcome.error ?? 'The run failed.' });
  context.events.flush();
  context.hooks.runEnded(context, { status, answer: outcome.answer, error: outcome.error });
  return { runId: context.runId, status, answer: outcome.answer ?? null, error: outcome.error ?? null };
}

/** Every way a run can end early, mapped to its status (and so to the CLI's exit code). */
function finishWithError(context: RunContext, error: unknown): RunResult {
  const cause: unknown = context.signal.aborted ? context.signal.reason : error;
  // A store error as SQLite threw it (a busy database, a full disk) pauses the run: it is no stop.
  const reason: unknown = ArchonError.isInstance(cause) ? cause : (asStoreError(cause) ?? cause);
  if (ArchonError.isInstance(reason) && reason.code === 'ESTOP_LATCHED') {
    const details = reason.details as { triggeredBy?: unknown; reason?: string } | undefined;
    context.events.append(context.runId, 'estop.triggered', {
      triggeredBy: EstopTriggerSchema.catch('operator').parse(details?.triggeredBy),
      reason: details?.reason ?? reason.message,
    });
    return finish(context, 'stopped', { error: reason.message });
  }
  if (!ArchonError.isInstance(reason)) {
    if (context.signal.aborted) return finish(context, 'stopped', { error: 'Stopped before it finished.' });
    context.log?.error({ err: reason, runId: context.runId }, 'unexpected error ended a run');
    return finish(context, 'failed', { error: `Unexpected error: ${reason instanceof Error ? reason.message : String(reason)}. The run was stopped here; \`archon resume ${context.runId}\` continues it.` });
  }
  // Another process drives the run now: nothing more is written for it here.
  if (reason.code === 'RUN_LEASED') return { runId: context.runId, status: 'stopped', answer: null, error: reason.message };
  if (reason.code === 'MODEL_UNAVAILABLE' || reason.code === 'DISK_FULL' || reason.code === 'STORE_LOCKED' || reason.code === 'PAUSED') return finish(context, 'paused', { error: reason.message });
  if (reason.code === 'CANCELLED') return finish(context, 'stopped', { error: reason.message });
  if (reason.code === 'BUDGET_EXCEEDED') return finish(context, 'budget_exhausted', { error: reason.message });
  if (reason.code === 'APPROVAL_REJECTED') return finish(context, 'rejected', { error: reason.message });
  return finish(context, 'failed', { error: reason.message });
}

/** Adaptive autonomy may tighten the policy once the plan is known; it never loosens it, and says why. */
function adaptAutonomy(context: RunContext, plan: Plan): void {
  const adapted = adaptPolicy(context.policy, measureAutonomySignals(plan, context.runs.recentDecisions(TRUST_WINDOW), context.runs.events(context.runId)));
  if (adapted.policy === context.policy) return;
  context.events.append(context.runId, 'policy.tightened', { from: context.policy, to: adapted.policy, reasons: adapted.reasons });
  context.policy = adapted.policy;
}

/** The final answer written from the steps' results; `feedback` says what the last one lacked. */
async function writeFinalAnswer(context: RunContext, plan: Plan, states: ReadonlyMap<string, StepState>, feedback: readonly string[]): Promise<string> {
  const results = plan.steps.map((step) => `- ${step.id} (${step.description}): ${states.get(step.id)?.result ?? ''}`).join('\n');
  const response = await callModel(
    asRole(context, 'planner'),
    {
      purpose: 'final',
      messages: [
        { role: 'system', content: "Write the final answer to the operator's goal from the results of the steps. Be direct and complete. Claim nothing the results do not show. Do not call tools." },
        { role: 'user', content: `Goal: ${context.goal}\n\nResults of the steps:\n${results}${feedback.map((line) => `\n\n${line} Write the final answer again.`).join('')}` },
      ],
    },
    null,
  );
  return response.content.replace(/^\s*Final Answer\s*:\s*/i, '').trim();
}

/** Writes the final answer, has the run's capabilities review it (the outcome check), then asks for it where the policy does; the run ends completed, or completed with the gaps the operator accepted. */
async function finishWithAnswer(context: RunContext, plan: Plan, steps: ReadonlyMap<string, StepState>): Promise<RunResult> {
  const states = await context.hooks.beforeFinalAnswer(context, plan, steps);
  const feedback: string[] = [];
  const rewrite = (why: string) => {
    feedback.push(why);
    return writeFinalAnswer(context, plan, states, feedback);
  };
  const reviewed = await context.hooks.reviewFinalAnswer(context, { answer: await writeFinalAnswer(context, plan, states, feedback), plan, states, rewrite });
  const answer = await approveFinalAnswer(context, reviewed.answer);
  return reviewed.gaps.length > 0 ? finish(context, 'completed_with_gaps', { answer, gaps: reviewed.gaps }) : finish(context, 'completed', { answer });
}

/** A run that ended with steps not done leads with its root cause: the first failed step and why, then what to do. */
function unfinishedError(context: RunContext, unfinished: readonly string[]): string {
  const steps = context.runs.getSteps(context.runId).filter((step) => unfinished.includes(step.spec.id));
  const cause = steps.find((step) => step.status === 'failed') ?? steps[0];
  const others = unfinished.filter((id) => id !== cause?.spec.id);
  const lead = cause ? `Step ${cause.spec.id} ${cause.status === 'failed' ? 'failed' : `was ${cause.status}`}: ${cause.error ?? 'no reason was recorded'}` : 'Not every step completed';
  return `${lead.replace(/[.\s]+$/, '')}.${others.length > 0 ? ` Also not completed: ${others.join(', ')}.` : ''} ${resumeAdvice(context.runId)}`;
}

/** Tool workers for as many calls as the plan's widest level runs at once, started before its steps need them. */
type WarmTools = (plan: Plan) => void;

function toolWarmer(context: RunContext, concurrency: number): WarmTools {
  return (plan) => context.warmTools(Math.min(planIndex(plan).widestLevel(), concurrency));
}

/** A failed step goes to the run's capabilities (recovery's re-plans and escalations). */
function recoverThroughHooks(context: RunContext): Recover {
  return (failed, reason, view, resumed = false) => context.hooks.stepFailed(context, failed, { reason, view, resumed });
}

/** A revised plan may be wider than the one it replaces: the pool grows before its steps start. */
function warmingRevisions(recover: Recover, warm: WarmTools): Recover {
  return async (failed, reason, view, resumed) => {
    const recovery = await recover(failed, reason, view, resumed);
    if (recovery?.kind === 'revise') warm(recovery.plan);
    return recovery;
  };
}

/** Plans (when there is no plan yet), runs the DAG, writes the final answer; every way out is recorded. The tools warm while the plan awaits approval. */
/** What a resumed run goes on from: its plan, each step's state, and the failed steps whose recovery was cut short (with why they failed). */
interface ResumedPlan {
  plan: Plan;
  states: Map<string, StepState>;
  unrecovered: ReadonlyMap<string, string>;
}

async function drive(context: RunContext, concurrency: number, existing: ResumedPlan | null): Promise<RunResult> {
  const warm = toolWarmer(context, concurrency);
  try {
    let plan = existing?.plan;
    if (!plan) {
      context.runs.setRunStatus(context.runId, 'planning', context.now().toISOString());
      const planner = asRole(context, 'planner');
      const memory = await context.hooks.beforePlan(context);
      plan = await approvePlan(context, async (feedback) => {
          const candidate = await planCoveringContract(contractOf(context), feedback, (told) => handOff(context, { from: 'coordinator', to: 'planner', body: planningTask(context.goal, told) }, () =>
            planGoal(context.goal, { mode: planner.mode, tools: context.tools, maxSteps: planStepCap(context.options), roles: context.roles.registry, callModel: (request) => callModel(planner, { purpose: 'plan', ...request }, null), onDialect: (dialect) => noteDialect(planner, dialect), depth: context.options.depth }, told, { parts: briefBackground(context, memory), nonce: fenceNonce(context) }),
          JSON.stringify));
          warm(candidate);
          return candidate;
        },
        (candidate) => announcePlanVerdict(context, candidate),
      );
      context.runs.savePlan(context.runId, plan.steps);
      context.events.append(context.runId, 'plan.ready', { plan });
      context.hooks.planApproved(context, plan);
    }
    context.plan = plan;
    warm(plan);
    fitCallCaps(context, plan.steps.length);
    adaptAutonomy(context, plan);
    context.runs.setRunStatus(context.runId, 'running', context.now().toISOString());
    const ran = await runPlan(context, plan, existing?.states ?? new Map(), concurrency, (step, results) => context.hooks.runStep(context, step, results) ?? handOff(context, stepTask(step), () => executeStep(asRole(context, context.roles.registry.roleOf(step)), step, results), describeOutcome), warmingRevisions(recoverThroughHooks(context), warm), existing?.unrecovered);
    context.signal.throwIfAborted();
    const unfinished = ran.plan.steps.filter((step) => ran.states.get(step.id)?.status !== 'completed' && !ran.states.get(step.id)?.waived);
    if (unfinished.length > 0) return finish(context, 'failed', { error: unfinishedError(context, unfinished.map((step) => step.id)) });
    return await finishWithAnswer(context, ran.plan, ran.states);
  } catch (error) {
    try {
      return finishWithError(context, error);
    } catch (unrecorded) {
      // Even the ending could not be written (a full disk): the run stays resumable; say why, typed.
      throw asStoreError(unrecorded) ?? unrecorded;
    }
  }
}

interface ContextInput {
  runId: string;
  goal: string;
  options: RunOptions;
  tools: ToolRegistry;
  embedder?: Embedder | null;
  roles: RoleModels;
}

/** A sub-agent's run is created inside its parent's: the parent's role servers, tools, signal, budget (its caps hold for both) and sub-agent slots. */
interface ParentLink {
  context: RunContext;
  slots: Slots;
}

function createContext(dependencies: RunEngineDependencies, run: ContextInput, signal: AbortSignal, parent: ParentLink | null = null): RunContext {
  const now = dependencies.now ?? (() => new Date());
  const controller = new AbortController();
  const spend = dependencies.runs.spending(run.runId, startOfToday(now()));
  const caps: BudgetCaps = {
    maxTokens: run.options.maxTokens,
    maxCostUsd: run.options.maxCostUsd,
    dayMaxTokens: dependencies.caps?.dayMaxTokens ?? null,
    dayMaxCostUsd: dependencies.caps?.dayMaxCostUsd ?? null,
    ...callCapsFor(0, run.options.maxIterations),
  };
  const context: RunContext = {
    runId: run.runId,
    goal: run.goal,
    options: run.options,
    policy: run.options.policy,
    mode: run.roles.binding(DEFAULT_STEP_ROLE).server.mode,
    dialect: null,
    signal: AbortSignal.any([signal, controller.signal, ...(parent ? [parent.context.signal] : []), ...(dependencies.estop ? [dependencies.estop.signal] : [])]),
    stopRun: (reason) => controller.abort(reason),
    tools: run.tools,
    warmTools: (count) => dependencies.warmTools?.(count, context.signal),
    lockedTools: new ToolLocks(parent?.context.lockedTools ?? storedLocksAbove(dependencies.runs, run.options.parentRunId)),
    toolGrants: new Set(),
    model: run.roles.binding(DEFAULT_STEP_ROLE).server.model,
    role: DEFAULT_STEP_ROLE,
    roles: { registry: new RoleRegistry(run.options.roles, stepRoleOf(dependencies.runs, run.options)), models: run.roles, tools: run.tools },
    contextWindow: contextWindowOf(run.roles.binding(DEFAULT_STEP_ROLE).server.probe),
    approvals: dependencies.approvals,
    toolApproval: dependencies.toolApproval ?? {},
    expiryMs: dependencies.expiryMs ?? {},
    guardsInjection: dependencies.guardsInjection ?? true,
    budget: new BudgetMeter(caps, spend, priceOf(dependencies, run.options), parent?.context.budget ?? null),
    plan: null,
    hooks: combineHooks(dependencies.capabilities(run.options)),
    capabilityStates: new Map(),
    earlierRun: earlierRunBrief(dependencies.runs, run.options.followUpOf),
    memory: dependencies.memory && run.options.memory !== false ? new RunMemory(dependencies.memory, run.embedder?.recordingTo((request) => recordServerRequest(context, request)) ?? null, run.roles.binding(DEFAULT_STEP_ROLE).server.probe.contextLength, dependencies.log) : null,
    runs: dependencies.runs,
    events: dependencies.events,
    subagents: subagentHost(dependencies, () => context, parent),
    bus: parent?.context.bus ?? dependencies.agentBus ?? new AgentBus(dependencies.runs.busMessages, dependencies.events, { now, newId: randomUUID }),
    log: dependencies.log,
    worker: dependencies.worker ?? null,
    replicate: dependencies.replicate ?? (() => Promise.resolve()),
    now,
    newId: dependencies.newId ?? randomUUID,
  };
  return context;
}

/** The locks the stored events of the runs above hold: a sub-agent resumed on its own, without its parent's live locks, keeps them too. */
function storedLocksAbove(runs: RunStore, parentRunId: string | undefined): ToolLocks | null {
  if (!parentRunId) return null;
  const above = new ToolLocks();
  for (let id: string | undefined = parentRunId, hops = 0; id && hops < MAX_SUBAGENT_DEPTH; id = runs.getRun(id)?.options.parentRunId, hops++) {
    for (const tool of runStateOf(runs.events(id, Number.MAX_SAFE_INTEGER)).lockedTools) above.add(tool);
  }
  return above;
}

/** The role a run's steps take when its plan names none: a sub-agent's are its parent step's role (else executor). */
function stepRoleOf(runs: RunStore, options: RunOptions): string {
  if (!options.parentRunId || !options.parentStepId) return DEFAULT_STEP_ROLE;
  const step = runs.getSteps(options.parentRunId).find((stored) => stored.spec.id === options.parentStepId);
  return step?.spec.role ?? DEFAULT_STEP_ROLE;
}

/**
 * How a run starts its sub-agents: each a child run driven here, in this process, under this run's
 * signal. A top-level run's children share Settings.maxSubagents slots; a sub-agent's own children run
 * one at a time inside the slot it holds (so nesting never waits on a slot an ancestor holds).
 */
function subagentHost(dependencies: RunEngineDependencies, parentContext: () => RunContext, parent: ParentLink | null): SubagentHost {
  const slots = new Slots(parent ? 1 : (dependencies.maxSubagents ?? DEFAULT_MAX_SUBAGENTS));
  return {
    acquireSlot: (signal) => slots.acquire(signal),
    run: (request) => driveChild(dependencies, { context: parentContext(), slots }, request),
  };
}

/** What the tools had to say before the run began: MCP servers that failed, tool definitions that changed. */
function announceTools(context: RunContext): void {
  for (const { type, ...body } of context.tools.notices) context.events.append(context.runId, type, body);
}

/** Each server the run talks to, its own first, as its probe found it. */
function announceProbes(context: RunContext): void {
  for (const { probe } of context.roles.models.servers()) {
    const { model, toolCalling, streaming, reason, contextLength, contextSource, parallelSlots } = probe;
    context.events.append(context.runId, 'model.probed', { model, toolCalling, streaming, reason, contextLength, contextSource, parallelSlots });
  }
}

/** Every role's server, each probed once: the run's own is already connected. */
function connectRoles(dependencies: RunEngineDependencies, options: RunOptions, connected: { probe: EndpointProbe; model: ModelClient }, signal: AbortSignal, session: ConnectSession): Promise<RoleModels> {
  return RoleModels.connect(
    new RoleRegistry(options.roles),
    { options, ...connected, price: priceOf(dependencies, options) },
    { connect: dependencies.connect, session, priceOf: (url, model) => priceFor(url, model, { prices: dependencies.modelPrices }) },
    signal,
  );
}

/** Probes go through the store's cache (a run soon after another on the same server and model sends none); `onRequest` hears each request sent. */
function probeSession(dependencies: RunEngineDependencies, onRequest?: (request: ServerRequest) => void): ConnectSession {
  return { probes: dependencies.runs.probes, onRequest };
}

/** What probing sent for a run: its own server's requests, then its roles' servers'. */
function probeRequestsOf(own: readonly ServerRequest[] | undefined, roles: RoleModels): ServerRequest[] {
  return [...(own ?? []), ...roles.probeRequests];
}

/**
 * The probe's requests as the run's `model_calls` rows, with their tokens, in the caller's transaction
 * when there is one. They are charged nothing: the probe comes before the run's budget could refuse
 * it, and a one-token request is not what a cap is for.
 */
function recordProbeRequests(dependencies: RunEngineDependencies, run: { id: string; policy: Policy }, requests: readonly ServerRequest[]): void {
  const newId = dependencies.newId ?? randomUUID;
  dependencies.runs.recordModelRequests(requests.map((request) => ({ call: serverRequestRow({ runId: run.id, id: newId(), policy: run.policy }, request), charge: { tokens: 0, costUsd: 0 } })));
}

/** The price given for this run (a flag), else the one it started with, else Settings, the machine or the table. */
function priceOf(dependencies: RunEngineDependencies, options: RunOptions): Price {
  return priceFor(options.modelUrl, options.model, { prices: dependencies.modelPrices, override: dependencies.price ?? options.price });
}

/** What a new run starts with: its servers probed (or their probes cached; `refused` is told when one fails), its price settled, its tools gathered. */
async function prepareRun(dependencies: RunEngineDependencies, options: RunOptions, signal: AbortSignal, session: ConnectSession, refused: (error: unknown) => void) {
  const failed = (error: unknown): never => {
    refused(error);
    throw error;
  };
  const { probe, model, embedder, requests } = await dependencies.connect(options, signal, session).catch(failed);
  dependencies.estop?.assertArmed();
  const connected = { ...options, model: probe.model, maxPlanSteps: options.maxPlanSteps ?? dependencies.maxPlanSteps };
  const resolved = { ...connected, price: settlePrice(priceOf(dependencies, connected), connected) };
  const roles = await connectRoles(dependencies, resolved, { probe, model }, signal, session).catch(failed);
  const tools = await dependencies.tools(resolved, signal);
  dependencies.estop?.assertArmed();
  return { resolved, roles, tools, embedder, probeRequests: probeRequestsOf(requests, roles) };
}

/**
 * A run whose probe failed after a server received it (a model it does not serve, no model loaded, a
 * role's server failing): created as failed with those requests and why, so every request a server
 * received is on record; nothing is created when no server answered. Also a run a worker refuses
 * before it starts, which no terminal would tell anyone of.
 */
export function recordRefusedRun(dependencies: RunEngineDependencies, run: { id: string; goal: string; options: RunOptions }, requests: readonly ServerRequest[], error: unknown): void {
  const now = (dependencies.now ?? (() => new Date()))().toISOString();
  const reason = error instanceof Error ? error.message : String(error);
  const { id, goal, options } = run;
  dependencies.runs.together(() => {
    dependencies.runs.createRun({ id, goal, policy: options.policy, options, now });
    recordProbeRequests(dependencies, { id, policy: options.policy }, requests);
    dependencies.runs.setRunStatus(id, 'failed', now, { error: reason });
  });
  dependencies.events.append(id, 'run.started', { goal, policy: options.policy, toolApproval: { ...(dependencies.toolApproval ?? {}) }, maxReplans: options.maxReplans });
  for (const request of requests) announceServerRequest(dependencies.events, id, request);
  dependencies.events.append(id, 'run.failed', { error: reason });
  dependencies.events.flush();
  dependencies.events.forget(id);
}

/** `archon run`: refuse while the stop is latched, probe the endpoint (nothing is created if it is unreachable), then run the goal to its end; a cost cap without a price refuses it too. */
export async function startRun(dependencies: RunEngineDependencies, goal: string, options: RunOptions, signal: AbortSignal, runId = (dependencies.newId ?? randomUUID)()): Promise<RunResult> {
  dependencies.estop?.assertArmed();
  const pinned = pinOf(options.workspace);
  const heard: ServerRequest[] = [];
  const session = probeSession(dependencies, (request) => heard.push(request));
  const { resolved, roles, tools, embedder, probeRequests } = await prepareRun(dependencies, options, signal, session, (error) => {
    if (heard.length > 0 && !signal.aborted) recordRefusedRun(dependencies, { id: runId, goal, options }, heard, error);
  });
  const now = dependencies.now ?? (() => new Date());
  // The probe's requests reached the server before the run existed: they are recorded with its row.
  dependencies.runs.together(() => {
    dependencies.runs.createRun({ id: runId, goal, policy: resolved.policy, options: resolved, now: now().toISOString() });
    if (pinned) dependencies.runs.pinWorkspace(runId, pinned);
    recordProbeRequests(dependencies, { id: runId, policy: resolved.policy }, probeRequests);
  });
  dependencies.onCreated?.(runId);
  const lease = leaseRun(dependencies.runs, runId);
  try {
    const context = createContext(dependencies, { runId, goal, options: resolved, tools, roles, embedder }, signal);
    lease.onLost((error) => context.stopRun(error));
    lease.onControl((control) => context.stopRun(runControlError(runId, control)));
    context.events.append(runId, 'run.started', { goal, policy: resolved.policy, toolApproval: { ...context.toolApproval }, maxReplans: resolved.maxReplans });
    for (const request of probeRequests) announceServerRequest(context.events, runId, request);
    announceProbes(context);
    announceTools(context);
    return await drive(context, roles.fanOut(resolved.concurrency), null);
  } finally {
    lease.release();
    dependencies.events.forget(runId);
  }
}

function isDialectName(name: string): name is DialectName {
  return (DIALECT_NAMES as readonly string[]).includes(name);
}

/** Caps the resume itself set anew (`--max-tokens`, `--max-cost`): the operator's latest word stands over a raise made before. */
function capsSetOnResume(context: RunContext): CapName[] {
  const stored = context.runs.getRun(context.runId)?.options;
  const caps: CapName[] = [];
  if (stored && stored.maxTokens !== context.options.maxTokens) caps.push('tokens');
  if (stored && stored.maxCostUsd !== context.options.maxCostUsd) caps.push('cost');
  return caps;
}

/** What a run decided along the way, as the fold of its stored events has it (shared/run-state.ts): locks (and those above it, recorded now), grants, the dialect, raised caps. */
function restoreRunState(context: RunContext): void {
  context.events.flush();
  const state = runStateOf(context.runs.events(context.runId, Number.MAX_SAFE_INTEGER));
  for (const tool of state.lockedTools) context.lockedTools.add(tool);
  inheritLocks(context);
  for (const grant of state.toolGrants) context.toolGrants.add(grant);
  if (state.dialect !== null && isDialectName(state.dialect)) context.dialect = state.dialect;
  const setOnResume = capsSetOnResume(context);
  for (const cap of CAP_NAMES) {
    const raised = state.raisedCaps[cap];
    if (raised !== undefined && !setOnResume.includes(cap)) context.budget.raise(cap, raised);
  }
}

const RERUN_STATUSES: readonly StepStatus[] = ['failed', 'skipped'];

/** A failed run's failed and skipped steps run again once the operator confirms: their recovery ended with the run. */
async function confirmRerunOf(context: RunContext, steps: readonly StoredStep[]): Promise<string[] | null> {
  const rerun = steps.filter((step) => RERUN_STATUSES.includes(step.status) && !step.waived).map((step) => step.spec.id);
  if (!(await confirmRerun(context, rerun))) return null;
  for (const id of rerun) context.runs.retryStep(context.runId, id);
  return rerun;
}

/**
 * A run that did not end failed (its process died, or it stopped or paused) left each failed step's
 * recovery unfinished: the failure is on record, so the step goes on to its recovery (a re-plan, an
 * escalation), never runs again from scratch; its side effects are not repeated behind a question
 * about the whole run.
 */
function unrecoveredFailures(steps: readonly StoredStep[]): Map<string, string> {
  return new Map(steps.filter((step) => step.status === 'failed' && !step.waived).map((step) => [step.spec.id, step.error ?? 'The step failed.']));
}

/**
 * A step that was not completed goes on where it stopped (its conversation is recorded); completed ones keep their results, waived ones
 * stay waived, and a failed one whose recovery was cut short stays failed for its recovery.
 */
function stepStates(steps: readonly StoredStep[], rerun: readonly string[], unrecovered: ReadonlyMap<string, string>): Map<string, StepState> {
  const stateOf = (step: StoredStep): StepState => {
    if (step.waived) return { status: 'skipped', result: null, waived: true };
    if (unrecovered.has(step.spec.id)) return { status: 'failed', result: null };
    return step.status === 'completed' && !rerun.includes(step.spec.id) ? { status: 'completed', result: step.result } : { status: 'pending', result: null };
  };
  return new Map(steps.map((step) => [step.spec.id, stateOf(step)]));
}

/**
 * A resumed run goes on: stale approvals expire, orphans die, a failed run's failed steps run again once the operator confirms, the
 * recovery of any other failed step goes on, and the DAG continues.
 */
async function continueRun(context: RunContext): Promise<RunResult> {
  const runId = context.runId;
  const endedFailed = context.runs.getRun(runId)?.summary.status === 'failed';
  context.runs.expireStaleApprovals(runId, context.now().toISOString());
  killOrphans(context);
  // Steps a scoped re-plan replaced stay in the store (greyed in the app) but are no longer part of the plan.
  const steps = context.runs.getSteps(runId).filter((step) => step.replacedIn === null);
  const unrecovered = endedFailed ? new Map<string, string>() : unrecoveredFailures(steps);
  let rerun: string[] | null;
  try {
    rerun = endedFailed ? await confirmRerunOf(context, steps) : [];
  } catch (error) {
    return finishWithError(context, error);
  }
  if (rerun === null) return finish(context, 'failed', { error: 'Not resumed: the operator did not confirm running the failed steps again.' });
  context.events.append(runId, 'run.resumed', { completedSteps: steps.filter((step) => step.status === 'completed').map((step) => step.spec.id), rerunSteps: rerun, recoveringSteps: [...unrecovered.keys()] });
  announceProbes(context);
  announceTools(context);
  // After the tools' notices: a grant for a tool whose definition changed since is not restored.
  restoreRunState(context);
  const plan = steps.length > 0 ? { goal: context.goal, steps: steps.map((step) => step.spec) } : null;
  return await drive(context, context.roles.models.fanOut(context.options.concurrency), plan ? { plan, states: stepStates(steps, rerun, unrecovered), unrecovered } : null);
}

/**
 * `archon resume`: one process drives a run (a live holder is refused by PID); tool processes a dead
 * one left behind are killed; completed steps keep their results and are not asked again; the others
 * continue their recorded conversations, a failed step whose recovery was cut short goes on to it,
 * and a failed run's failed and skipped steps start again once the operator confirms. A run of a
 * sub-agent tree another live process drives is refused, naming that process.
 */
export async function resumeRun(dependencies: RunEngineDependencies, runId: string, overrides: Partial<RunOptions>, signal: AbortSignal): Promise<RunResult> {
  dependencies.estop?.assertArmed();
  const stored = dependencies.runs.getRun(runId);
  if (!stored) throw new ArchonError('NOT_FOUND', `There is no run ${runId} in this data folder. \`archon runs\` lists the runs.`);
  if (stored.summary.kind === 'dream') throw new ArchonError('CONFIG_INVALID', `Run ${runId} is a dream; a dream is not resumed. \`archon dream\` starts a new one over the runs not dreamt yet.`);
  if (stored.summary.status === 'completed' || stored.summary.status === 'completed_with_gaps' || stored.summary.status === 'rejected') {
    throw new ArchonError('CONFIG_INVALID', `Run ${runId} already ended (${stored.summary.status}); there is nothing to resume. Start a new run instead.`);
  }
  // A workspace the operator names now is confirmed by them; the stored one must still be the folder it was.
  if (overrides.workspace === undefined) holdWorkspace(dependencies.runs, runId, stored.options.workspace, 'resume');
  else pinWorkspace(dependencies.runs, runId, overrides.workspace);
  const lease = leaseRun(dependencies.runs, runId);
  try {
    const options = { ...stored.options, ...overrides };
    // The run exists: each probe request is recorded as the server answers it, whether or not the probe then succeeds.
    const session = probeSession(dependencies, (request) => {
      recordProbeRequests(dependencies, { id: runId, policy: options.policy }, [request]);
      announceServerRequest(dependencies.events, runId, request);
    });
    const { probe, model, embedder } = await dependencies.connect(options, signal, session);
    const resolved = { ...options, model: probe.model };
    const roles = await connectRoles(dependencies, resolved, { probe, model }, signal, session);
    const tools = await dependencies.tools(resolved, signal);
    const context = createContext(dependencies, { runId, goal: stored.summary.goal, options: resolved, tools, roles, embedder }, signal);
    lease.onLost((error) => context.stopRun(error));
    lease.onControl((control) => context.stopRun(runControlError(runId, control)));
    return await continueRun(context);
  } finally {
    lease.release();
    dependencies.events.forget(runId);
  }
}

/** A child run's options: its parent's, with the carved budget and its place in the tree. */
function childOptions(parent: RunContext, request: ChildRunRequest): RunOptions {
  const { followUpOf: _followUp, ...inherited } = parent.options;
  return { ...inherited, policy: parent.policy, maxTokens: request.budget.maxTokens, maxCostUsd: request.budget.maxCostUsd, parentRunId: parent.runId, parentStepId: request.stepId, depth: (parent.options.depth ?? 0) + 1 };
}

/**
 * A sub-agent's run another process drives (someone resumed it on its own) is waited for, never
 * failed: its step failing would re-plan and start a second child. Past LEASE_WAIT_MS this run pauses.
 */
async function childLease(runs: RunStore, parent: RunContext, childRunId: string): Promise<RunLease> {
  try {
    return await leaseRunWhenFree(runs, childRunId, parent.signal);
  } catch (error) {
    if (!ArchonError.isInstance(error) || error.code !== 'RUN_LEASED') throw error;
    const holder = (error.details as { pid?: number } | undefined)?.pid;
    throw new ArchonError('PAUSED', `Sub-agent run ${childRunId} is driven by another Archon process (PID ${holder ?? '?'}); run ${parent.runId} waited ${LEASE_WAIT_MS / 60_000} minutes for it and paused. Once that process has ended, \`archon resume ${parent.runId}\` continues it.`);
  }
}

const ENDED_ELSEWHERE: readonly RunStatus[] = ['completed', 'rejected', 'failed'];

/** A sub-agent's run that another process drove to its end while this one waited: taken as it ended, not driven again. */
function endedWhileWaited(runs: RunStore, childRunId: string, before: RunStatus | undefined): RunResult | null {
  const summary = runs.getRun(childRunId)?.summary;
  if (!summary || summary.status === before || !ENDED_ELSEWHERE.includes(summary.status)) return null;
  return { runId: childRunId, status: summary.status, answer: summary.answer, error: summary.error };
}

/** Starts a sub-agent's run, or continues the one a crashed parent left (completed steps keep their results); it talks to its parent's servers, probed once for the tree. */
async function driveChild(dependencies: RunEngineDependencies, parent: ParentLink, request: ChildRunRequest): Promise<RunResult> {
  const stored = request.resume ? dependencies.runs.getRun(request.runId) : null;
  const options = stored?.options ?? childOptions(parent.context, request);
  if (!stored) {
    dependencies.runs.createRun({ id: request.runId, goal: request.goal, policy: options.policy, options, now: parent.context.now().toISOString() });
    const pin = dependencies.runs.workspacePin(parent.context.runId);
    if (pin) dependencies.runs.pinWorkspace(request.runId, pin);
  }
  request.onCreated();
  const lease = await childLease(dependencies.runs, parent.context, request.runId);
  try {
    const ended = endedWhileWaited(dependencies.runs, request.runId, stored?.summary.status);
    if (ended) return ended;
    const input = { runId: request.runId, goal: request.goal, options, tools: parent.context.roles.tools, roles: parent.context.roles.models, embedder: parent.context.memory?.embedder };
    const context = createContext(dependencies, input, parent.context.signal, parent);
    lease.onLost((error) => context.stopRun(error));
    lease.onControl((control) => context.stopRun(runControlError(request.runId, control)));
    if (!stored) {
      context.events.append(request.runId, 'run.started', { goal: request.goal, policy: options.policy, toolApproval: { ...context.toolApproval }, parentRunId: parent.context.runId, parentStepId: request.stepId, maxReplans: options.maxReplans });
      inheritLocks(context);
      return await drive(context, context.roles.models.fanOut(options.concurrency), null);
    }
    return await continueRun(context);
  } finally {
    lease.release();
    dependencies.events.forget(request.runId);
  }
}
