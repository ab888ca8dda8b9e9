import { raceAbort } from '../../shared/abort';
import { ArchonError } from '../../shared/errors';
import type { Policy } from '../../shared/schemas/run';
import { approveModelCall, askToRaiseBudget } from '../approval/checkpoints';
import type { RunEventLog } from '../events/run-event-log';
import { estimateTokens, type ChatRequest, type ChatResponse } from '../model/chat';
import type { ServerRequest } from '../model/server-request';
import type { ModelCallRow } from '../store/run-store';
import { noteDialect, type RunContext } from './run-context';

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
  const allowedBy = await approveModelCall(context, request, stepId);
  const { server, slots } = context.roles.models.binding(context.role);
  const estimate = estimateTokens(JSON.stringify(request.messages) + JSON.stringify(request.tools ?? [])) + (request.maxTokens ?? COMPLETION_ALLOWANCE);
  for (let breach = context.budget.check(estimate, server.price), asks = 0; breach !== null; breach = context.budget.check(estimate, server.price)) {
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
  const reservation = context.budget.reserve(estimate, server.price);
  if (context.budget.crossedWarning()) context.events.append(context.runId, 'budget.warning', { message: 'The run is at 80% of a budget cap, counting the call now starting.' });
  let startedAt = context.now().toISOString();
  const charges: Promise<void>[] = [];
  try {
    // What the run did before this call (a repair asked, a verdict) is on disk, announced and held where the run is held before the call leaves.
    context.events.flush();
    await context.replicate(context.signal);
    const chat = () => context.model.chat(request, {
      signal: context.signal,
      onAttempt(attempt) {
        const endedAt = context.now().toISOString();
        const charged = context.budget.charge(attempt.usage, server.price);
        const recorded = context.runs.recordModelAttempt({
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
          allowedBy,
        }, charged);
        // A failed flush is reported when the call ends (Promise.all below), not as an unhandled rejection during a retry's wait.
        recorded.catch(() => undefined);
        charges.push(recorded);
        if (!attempt.ok) context.events.append(context.runId, 'model.attempt_failed', { stepId, purpose: request.purpose, attempt: attempt.attempt, error: attempt.error ?? 'failed' });
        announceBudget(context);
        startedAt = endedAt;
      },
    });
    // The role's bound first, then its server's slots: a call waiting on its role holds no server slot.
    // Every attempt's charge on disk before the outcome is acted on, whatever it was.
    const response = await slots.run(context.signal, () => server.slots.run(context.signal, chat)).finally(() => Promise.all(charges));
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

/** A request to a model server outside the run's chat calls (the probe, an embedding) as its `model_calls` row: no checkpoint asks for these, so the policy let it through. */
export function serverRequestRow(call: { runId: string; id: string; policy: Policy }, request: ServerRequest): ModelCallRow {
  const { promptTokens, completionTokens, estimated } = request.usage;
  const { id, runId, policy } = call;
  return { id, runId, stepId: null, purpose: request.purpose, attempt: 1, ok: request.ok, promptTokens, completionTokens, estimated, error: request.error, startedAt: request.startedAt, endedAt: request.endedAt, allowedBy: `policy:${policy}` };
}

/** Such a request, announced (and so audited) like any model call, once its row is stored. */
export function announceServerRequest(events: RunEventLog, runId: string, request: ServerRequest): void {
  if (request.ok) {
    events.append(runId, 'model.completed', { stepId: null, purpose: request.purpose, content: request.request, toolCalls: [], promptTokens: request.usage.promptTokens, completionTokens: request.usage.completionTokens, attempts: 1 });
  } else {
    events.append(runId, 'model.attempt_failed', { stepId: null, purpose: request.purpose, attempt: 1, error: `${request.request}: ${request.error ?? 'failed'}` });
  }
}

/**
 * A request the run made of a model server outside its chat calls: stored, then announced. An
 * embedding is charged at the run's own model's price; a probe is not (it comes before a budget could
 * refuse it, and a one-token request is not what a cap is for).
 */
export async function recordServerRequest(context: RunContext, request: ServerRequest): Promise<void> {
  const charge = request.purpose === 'probe' ? { tokens: 0, costUsd: 0 } : context.budget.charge(request.usage, context.roles.models.own.price);
  await context.runs.recordModelAttempt(serverRequestRow({ runId: context.runId, id: context.newId(), policy: context.policy }, request), charge);
  announceServerRequest(context.events, context.runId, request);
}
