import type { RunOptions } from '../../shared/schemas/run';
import type { ToolApprovalOverride } from '../../shared/schemas/settings';
import type { ApprovalChannel } from '../approval/approval-channel';
import type { RunEventLog } from '../events/run-event-log';
import type { ChatRequest, ChatResponse, ModelClient, ModelMode } from '../model/chat';
import type { RunStore } from '../store/run-store';
import type { ToolRegistry } from '../tools/tool-registry';

/** Everything one run's code needs, passed down explicitly: no globals, one signal for the run. */
export interface RunContext {
  runId: string;
  goal: string;
  options: RunOptions;
  mode: ModelMode;
  signal: AbortSignal;
  tools: ToolRegistry;
  model: ModelClient;
  approvals: ApprovalChannel;
  /** The operator's per-tool approval overrides (Settings). */
  toolApproval: Readonly<Record<string, ToolApprovalOverride>>;
  runs: RunStore;
  events: RunEventLog;
  now(): Date;
  newId(): string;
}

/** A model call that records every attempt (failed ones too) before announcing the result. */
export async function callModel(context: RunContext, request: ChatRequest, stepId: string | null): Promise<ChatResponse> {
  let startedAt = context.now().toISOString();
  const response = await context.model.chat(request, {
    signal: context.signal,
    onAttempt(attempt) {
      const endedAt = context.now().toISOString();
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
      startedAt = endedAt;
    },
  });
  context.events.append(context.runId, 'model.completed', {
    stepId,
    purpose: request.purpose,
    promptTokens: response.usage.promptTokens,
    completionTokens: response.usage.completionTokens,
    attempts: response.attempts,
  });
  return response;
}
