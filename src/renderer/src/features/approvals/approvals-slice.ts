import { arrivalTracker } from '../../../../shared/arrivals';
import type { ApprovalDecision, ApprovalRequest } from '../../../../shared/schemas/approval';
import { latestOnly } from '../../store/latest-only';
import { pollEvery } from '../../store/poll';
import type { SliceContext } from '../../store/slice';
import { notifyApprovalRequest } from './approval-notifications';

/** How often the cluster is asked what its runs wait for: workers on other machines ask it, and only asking tells. */
const CLUSTER_POLL_MS = 3000;

export interface ApprovalsSlice {
  /** What this desk's runs ask, oldest first. */
  pending: ApprovalRequest[];
  /** What runs that workers of the cluster in Settings drive ask a person, oldest first. */
  clusterPending: ApprovalRequest[];
  /** Why the cluster's requests could not be read at the last try; null when they were. */
  clusterApprovalsProblem: string | null;
  refreshApprovals(): Promise<void>;
  refreshClusterApprovals(): Promise<void>;
  /** Asks the cluster now and every few seconds until the returned function is called. */
  watchClusterApprovals(): () => void;
  /** Answers a request of this desk's runs. */
  decide(request: ApprovalRequest, decision: ApprovalDecision): Promise<void>;
  /** Answers a request that waits on the cluster, there. */
  decideOnCluster(request: ApprovalRequest, decision: ApprovalDecision): Promise<void>;
}

const idsOf = (requests: readonly ApprovalRequest[]) => new Set(requests.map((request) => request.id));

/** A decision as the host takes it: naming the action the operator was shown. */
const answerOf = (request: ApprovalRequest, decision: ApprovalDecision) => ({ approvalId: request.id, actionHash: request.actionHash, decision });

export function createApprovalsSlice({ set, get, client, attempt }: SliceContext): ApprovalsSlice {
  const listPending = latestOnly(() => client.commands['approvals.list'](), (pending) => set({ pending }));
  const arrivals = arrivalTracker((request: ApprovalRequest) => request.id);
  /** Requests answered here: a list read before the cluster took the answer still has them, and must not show them again. */
  const answered = new Set<string>();
  const applyCluster = (read: ApprovalRequest[]) => {
    const ids = idsOf(read);
    for (const id of answered) if (!ids.has(id)) answered.delete(id);
    const clusterPending = read.filter((request) => !answered.has(request.id));
    const arrived = arrivals(read).filter((request) => !answered.has(request.id));
    set({ clusterPending, clusterApprovalsProblem: null });
    for (const request of arrived) notifyApprovalRequest(request);
  };
  const listCluster = latestOnly(() => client.commands['clusterApprovals.list'](), applyCluster);
  return {
    pending: [],
    clusterPending: [],
    clusterApprovalsProblem: null,
    refreshApprovals: () => attempt(listPending),
    // Said in the Inbox, not as an error: a cluster out of reach would otherwise raise one every few seconds.
    refreshClusterApprovals: () => listCluster().catch((error: unknown) => set({ clusterApprovalsProblem: error instanceof Error ? error.message : String(error) })),
    watchClusterApprovals: () => pollEvery(CLUSTER_POLL_MS, () => get().refreshClusterApprovals()),
    decide: (request, decision) =>
      attempt(async () => {
        set((state) => ({ pending: state.pending.filter((item) => item.id !== request.id) }));
        await client.commands['approvals.decide'](answerOf(request, decision));
      }),
    decideOnCluster: (request, decision) =>
      attempt(async () => {
        answered.add(request.id);
        set((state) => ({ clusterPending: state.clusterPending.filter((item) => item.id !== request.id) }));
        // Not taken (it no longer waits, the cluster is out of reach): the next list shows it again if it still waits.
        await client.commands['clusterApprovals.decide'](answerOf(request, decision)).catch((error: unknown) => {
          answered.delete(request.id);
          throw error;
        });
      }),
  };
}
