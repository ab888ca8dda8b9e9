import type { ApprovalDecision, ApprovalRequest } from '../../../../shared/schemas/approval';
import { latestOnly } from '../../store/latest-only';
import type { SliceContext } from '../../store/slice';

export interface ApprovalsSlice {
  pending: ApprovalRequest[];
  refreshApprovals(): Promise<void>;
  decide(request: ApprovalRequest, decision: ApprovalDecision): Promise<void>;
}

export function createApprovalsSlice({ set, client, attempt }: SliceContext): ApprovalsSlice {
  const listPending = latestOnly(() => client.commands['approvals.list'](), (pending) => set({ pending }));
  return {
    pending: [],
    refreshApprovals: () => attempt(listPending),
    decide: (request, decision) =>
      attempt(async () => {
        set((state) => ({ pending: state.pending.filter((item) => item.id !== request.id) }));
        await client.commands['approvals.decide']({ approvalId: request.id, actionHash: request.actionHash, decision });
      }),
  };
}
