import { raceAbort } from '../../shared/abort';
import { ArchonError } from '../../shared/errors';
import type { ApprovalKind } from '../../shared/schemas/approval';
import type { Plan } from '../../shared/schemas/plan';
import type { Policy, RunOptions } from '../../shared/schemas/run';
import type { ToolApprovalOverride } from '../../shared/schemas/settings';
import type { ApprovalChannel } from '../approval/approval-channel';
import { approveModelCall, askToRaiseBudget } from '../approval/checkpoints';
import { callCapsFor, type BudgetMeter } from '../budget/budget-meter';
import type { RunEventLog } from '../events/run-event-log';
import type { Log } from '../log';
import type { DialectName } from '../model/dialects/dialect';
import { estimateTokens, type ChatRequest, type ChatResponse, type ModelClient, type ModelMode } from '../model/chat';
import type { ContextWindow } from '../model/context-window';
import type { RunStore } from '../store/run-store';
import type { ToolRegistry } from '../tools/tool-registry';
import type { GoalGradient } from './goal-gradient';
import type { RunMemory } from '../memory/recall';

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
  /** Tools a person locked out for the rest of the run. */
  lockedTools: Set<string>;
  /** Tools whose later calls a person approved for the rest of the run ("approve all like this"), with their side-effect class. */
  toolGrants: Set<string>;
  model: ModelClient;
  /** The model's context when known: a step's history is compacted to stay within its share. */
  contextWindow: ContextWindow | null;
  approvals: ApprovalChannel;
  /** The operator's per-tool approval overrides (Settings). */
  toolApproval: Readonly<Record<string, ToolApprovalOverride>>;
  expiryMs: Partial<Record<ApprovalKind, number>>;
  budget: BudgetMeter;
  plan: Plan | null;
  /** The Goal Gradient Solver: the run's gap to its goal, measured after each failure and repair. */
  gradient: GoalGradient;
  /** Long-term memory for this run: null (or absent) when memory is off (`--no-memory`, Settings). */
  memory?: RunMemory | null;
  /** For a follow-up: the earlier run's goal, plan and answer (see follow-up.ts). */
  earlierRun?: string | null;
  runs: RunStore;
  events: RunEventLog;
  log?: Log;
  now(): Date;
  newId(): string;
}

/** The runaway guards sized for a plan of `steps` steps (callCapsFor): set once the plan is known, grown by a re-plan. */
export function fitCallCaps(context: RunContext, steps: number): void {
  context.budget.fitCalls(callCapsFor(steps, context.options.maxIterations));
}

/** The tools the model may still use: the registry less anything locked. */
export function availableTools(context: RunContext): ToolRegistry {
  return context.lockedTools.size === 0 ? context.tools : context.tools.without([...context.lockedTools]);
}

/** Records the dialect the model writes in (on the run, as an event) when it is new. */
export function noteDialect(context: RunContext, dialect: DialectName | undefined): void {
  if (!dialect || context.dialect === dialect) return;
  context.dialect = dialect;
  context.events.append(context.runId, 'model.dialect_detected', { dialect });
}

/** Completion tokens assumed for a call when budgeting before it: a call is never let through on hope. */
const COMPLETION_ALLOWANCE = 512;

function announceBudget(context: RunContext): void {
  const { totals, limits } = context.budget;
  context.events.append(context.runId, 'budget.updated', {
    tokens: totals.tokens,
    costUsd: totals.costUsd,
    maxTokens: limits.maxTokens,
    maxCostUsd: limits.maxCostUsd,
    modelCalls: totals.modelCalls,
    toolCalls: totals.toolCalls,
    priceKnown: context.budget.price.known,
  });
}

/**
 * A model call under the run's rules: asked for when the policy says so, checked against the budget
 * before it happens (used + reserved + this estimate must fit), every attempt charged and recorded
 * before the result is announced.
 */
export async function callModel(context: RunContext, request: ChatRequest, stepId: string | null): Promise<ChatResponse> {
  await approveModelCall(context, request, stepId);
  const estimate = estimateTokens(JSON.stringify(request.messages) + JSON.stringify(request.tools ?? [])) + (request.maxTokens ?? COMPLETION_ALLOWANCE);
  for (let breach = context.budget.check(estimate), asks = 0; breach !== null; breach = context.budget.check(estimate)) {
    context.signal.throwIfAborted();
    if (context.budget.callsInFlight() > 0) {
      // Calls in flight hold reservations that may prove larger than what they use: wait for one to settle.
      await raceAbort(context.budget.nextRelease(), context.signal);
      continue;
    }
    if (asks++ >= 3) throw new ArchonError('BUDGET_EXCEEDED', `Budget exhausted: ${breach.message}.`);
    await raceAbort(
      context.budget.raiseOnce(breach.cap, async () => {
        await askToRaiseBudget(context, breach, stepId);
        announceBudget(context);
      }),
      context.signal,
    );
  }
  const reservation = context.budget.reserve(estimate);
  if (context.budget.crossedWarning()) context.events.append(context.runId, 'budget.warning', { message: 'The run is at 80% of a budget cap, counting the call now starting.' });
  let startedAt = context.now().toISOString();
  try {
    const response = await context.model.chat(request, {
      signal: context.signal,
      onAttempt(attempt) {
        const endedAt = context.now().toISOString();
        const charged = context.budget.charge(attempt.usage);
        context.runs.recordModelAttempt({
          id: context.newId(),
          runId: context.runId,
          stepId,
          purpose: request.purpose,
          attempt: attempt.attempt,
          ok: attempt.ok,
          promptTokens: attempt.usage.promptTokens,
          completionTokens: attempt.usage.completionTokens,
          estimated: attempt.usage.estimated,
          error: attempt.error ?? null,
          startedAt,
          endedAt,
        });
        context.runs.recordSpend({ runId: context.runId, kind: 'model_call', tokens: charged.tokens, costUsd: charged.costUsd, now: endedAt });
        if (!attempt.ok) context.events.append(context.runId, 'model.attempt_failed', { stepId, purpose: request.purpose, attempt: attempt.attempt, error: attempt.error ?? 'failed' });
        announceBudget(context);
        startedAt = endedAt;
      },
    });
    noteDialect(context, response.dialect);
    context.events.append(context.runId, 'model.completed', {
      stepId,
      purpose: request.purpose,
      content: response.content.slice(0, 2000),
      toolCalls: response.toolCalls.map((call) => call.name),
      promptTokens: response.usage.promptTokens,
      completionTokens: response.usage.completionTokens,
      attempts: response.attempts,
    });
    return response;
  } finally {
    context.budget.release(reservation);
  }
}

/** What a failed run's operator does next, in the command line's terms (`inAppTerms` says it for the app). */
export function resumeAdvice(runId: string): string {
  return `Fix the cause, then \`archon resume ${runId}\` continues it.`;
}
