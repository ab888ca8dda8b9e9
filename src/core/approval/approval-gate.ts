import { createHash } from 'node:crypto';
import type { ApprovalDecision, ApprovalKind } from '../../shared/schemas/approval';
import type { ToolApprovalOverride } from '../../shared/schemas/settings';
import type { ToolDefinition } from '../tools/tool-registry';
import type { RunContext } from '../agent/run-context';

/** A stable hash of the exact action: keys sorted, so equal actions hash equal. */
export function actionHash(action: unknown): string {
  const canonical = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(canonical);
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)).map(([key, inner]) => [key, canonical(inner)]));
    }
    return value;
  };
  return createHash('sha256').update(JSON.stringify(canonical(action) ?? null)).digest('hex');
}

/**
 * Asks the human channel and records the request and the decision durably before anything acts
 * on it; both are announced as events.
 */
export async function requestApproval(
  context: RunContext,
  request: { kind: ApprovalKind; stepId: string | null; summary: string; action: unknown },
): Promise<ApprovalDecision> {
  const id = context.newId();
  const { runs } = context;
  runs.createApproval({ id, runId: context.runId, stepId: request.stepId, kind: request.kind, actionHash: actionHash(request.action), request, now: context.now().toISOString() });
  context.events.append(context.runId, 'approval.requested', { approvalId: id, kind: request.kind, stepId: request.stepId, summary: request.summary });
  const decision = await context.approvals.decide({ id, runId: context.runId, ...request }, { signal: context.signal });
  runs.resolveApproval(id, decision.verdict === 'approve' ? 'approved' : 'rejected', decision, context.now().toISOString());
  context.events.append(context.runId, 'approval.resolved', { approvalId: id, decision });
  return decision;
}

/** A tool call is put to a person when it has side effects, unless the operator set this tool to always or never ask. */
export function toolCallNeedsApproval(tool: ToolDefinition, override: ToolApprovalOverride | undefined): boolean {
  if (override === 'always') return true;
  if (override === 'never') return false;
  return tool.sideEffects !== 'none';
}
