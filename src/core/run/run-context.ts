import type { ApprovalKind } from '../../shared/schemas/approval';
import type { Plan } from '../../shared/schemas/plan';
import type { Policy, RunOptions, RunStatus } from '../../shared/schemas/run';
import type { ToolApprovalOverride } from '../../shared/schemas/settings';
import type { ApprovalChannel } from '../approval/approval-channel';
import { callCapsFor, type BudgetMeter } from '../budget/budget-meter';
import type { AgentBus } from '../bus/agent-bus';
import type { RunEventLog } from '../events/run-event-log';
import type { Log } from '../log';
import type { DialectName } from '../model/dialects/dialect-names';
import type { ModelClient, ModelMode } from '../model/chat';
import { contextWindowOf, type ContextWindow } from '../model/context-window';
import type { RoleModels } from '../roles/role-models';
import type { RoleRegistry } from '../roles/role-registry';
import type { RunStore } from '../store/run-store';
import type { ToolRegistry } from '../tools/tool-registry';
import type { Capability, Hooks } from './hooks';
import type { ToolLocks } from './tool-locks';
import type { RunMemory } from '../memory/recall';

/** A capability of a run: its hooks, handed the run's context. */
export type RunCapability = Capability<RunContext>;

/** A sub-agent's child run to start, or (`resume`) to continue where a crash left it. */
export interface ChildRunRequest {
  runId: string;
  goal: string;
  stepId: string;
  role: string | null;
  /** Carved from the parent's remaining budget when it starts; the parent's caps hold besides. */
  budget: { maxTokens: number | null; maxCostUsd: number | null };
  resume: boolean;
  /** Told once the child's run row exists, before it plans. */
  onCreated(): void;
}

export interface ChildRunOutcome {
  status: RunStatus;
  answer: string | null;
  error: string | null;
}

/** How a run starts its sub-agents (run-engine.ts wires it), and the slots that bound how many run at once. */
export interface SubagentHost {
  run(request: ChildRunRequest): Promise<ChildRunOutcome>;
  acquireSlot(signal: AbortSignal): Promise<() => void>;
}

/** Everything one run's code needs, passed down explicitly: no globals, one signal for the run. */
export interface RunContext {
  runId: string;
  goal: string;
  options: RunOptions;
  /** The policy in force: the operator's, or stricter when adaptive autonomy tightened it. */
  policy: Policy;
  mode: ModelMode;
  /** The tool-call dialect the model has written in this run, once seen: read first from then on. */
  dialect: DialectName | null;
  signal: AbortSignal;
  /** Ends the whole run: every step's model stream and tool call is aborted. */
  stopRun(reason: unknown): void;
  tools: ToolRegistry;
  /** Starts tool workers for `count` calls at once ahead of need (capped by the host); the run's stop ends the warming. */
  warmTools(count: number): void;
  /** Tools a person locked out for the rest of the run, on it or on a run above it. */
  lockedTools: ToolLocks;
  /** Tools whose later calls a person approved for the rest of the run ("approve all like this"), with their side-effect class. */
  toolGrants: Set<string>;
  model: ModelClient;
  /** The model's context when known: a step's history is compacted to stay within its share. */
  contextWindow: ContextWindow | null;
  /** The role this context acts as: its model, mode and tools are the role's (see asRole). */
  role: string;
  /** The run's role registry, each role's server, and every tool of the run (a role sees its share). */
  roles: { registry: RoleRegistry; models: RoleModels; tools: ToolRegistry };
  approvals: ApprovalChannel;
  /** The operator's per-tool approval overrides (Settings). */
  toolApproval: Readonly<Record<string, ToolApprovalOverride>>;
  expiryMs: Partial<Record<ApprovalKind, number>>;
  /** Whether a call that untrusted text may have steered is held for a person (see provenance/injection-guard.ts); always, but where the defence itself is measured. */
  guardsInjection: boolean;
  budget: BudgetMeter;
  plan: Plan | null;
  /** The run's capabilities, called at the run's named points (see hooks.ts). */
  hooks: Hooks<RunContext>;
  /** Each capability's own state for this run (see stateOf). */
  capabilityStates: Map<string, unknown>;
  /** Long-term memory for this run: null (or absent) when memory is off (`--no-memory`, Settings). */
  memory?: RunMemory | null;
  /** For a follow-up: the earlier run's goal, plan and answer (see follow-up.ts). */
  earlierRun?: string | null;
  runs: RunStore;
  events: RunEventLog;
  subagents: SubagentHost;
  /** Where every hand-off between agents is published (see bus/agent-bus.ts). */
  bus: AgentBus;
  log?: Log;
  /** The Restate worker driving the run, when one does (null: this process). */
  worker?: string | null;
  /**
   * Called before each model or tool call leaves: resolves once what the run wrote is held beyond this
   * machine (the cluster, for a run a worker drives), so another worker goes on from it; at once otherwise.
   */
  replicate(signal: AbortSignal): Promise<void>;
  now(): Date;
  newId(): string;
}

/** The runaway guards sized for a plan of `steps` steps (callCapsFor): set once the plan is known, grown by a re-plan. */
export function fitCallCaps(context: RunContext, steps: number): void {
  context.budget.fitCalls(callCapsFor(steps, context.options.maxIterations));
}

/** The tools the model may still use: the registry less anything locked. */
export function availableTools(context: RunContext): ToolRegistry {
  const locked = context.lockedTools.tools();
  return locked.length === 0 ? context.tools : context.tools.without(locked);
}

/**
 * The run as one role sees it: the role's model, its server's mode and only the role's tools; the
 * run's live state (plan, policy, locks, budget, signal) is read through from the run's context.
 */
export function asRole(context: RunContext, name: string): RunContext {
  const { server } = context.roles.models.binding(name);
  const view = Object.create(context) as RunContext;
  // The dialect is the model's: the run's own model keeps it on the run's context, another server on itself.
  const holder: { dialect: DialectName | null } = server === context.roles.models.own ? context : server;
  Object.defineProperty(view, 'dialect', { get: () => holder.dialect, set: (dialect: DialectName | null) => (holder.dialect = dialect), enumerable: true });
  return Object.assign(view, { role: name, model: server.model, mode: server.mode, contextWindow: contextWindowOf(server.probe), tools: context.roles.registry.toolsOf(name, context.roles.tools) });
}

/** A system prompt with the acting role's addition, when the operator gave one. */
export function withRolePrompt(context: RunContext, prompt: string): string {
  const addition = context.roles.registry.get(context.role)?.systemPrompt;
  return addition ? `${prompt}\n\n${addition}` : prompt;
}

/** Records the dialect the model writes in (on the run, as an event) when it is new. */
export function noteDialect(context: RunContext, dialect: DialectName | undefined): void {
  if (!dialect || context.dialect === dialect) return;
  context.dialect = dialect;
  context.events.append(context.runId, 'model.dialect_detected', { dialect });
}

/** What a failed run's operator does next, in the command line's terms (`inAppTerms` says it for the app). */
export function resumeAdvice(runId: string): string {
  return `Fix the cause, then \`archon resume ${runId}\` continues it.`;
}
