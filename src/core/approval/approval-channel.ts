import type { ApprovalDecision, ApprovalKind } from '../../shared/schemas/approval';

export interface ApprovalRequest {
  id: string;
  runId: string;
  stepId: string | null;
  kind: ApprovalKind;
  /** One line a person can decide on. */
  summary: string;
  /** The exact action proposed; the decision is bound to its hash. */
  action: unknown;
}

/**
 * The human channel: the only thing that can decide. The app's dialog, the terminal prompt, or the
 * `--approve` flag the operator typed implement it; nothing a model says reaches it.
 */
export interface ApprovalChannel {
  decide(request: ApprovalRequest, options: { signal: AbortSignal }): Promise<ApprovalDecision>;
}

export const approveAll: ApprovalChannel = {
  decide: async () => ({ verdict: 'approve' }),
};

export const denyAll: ApprovalChannel = {
  decide: async () => ({ verdict: 'reject', feedback: 'Denied: approvals are answered "no" in this run (--approve deny).' }),
};
