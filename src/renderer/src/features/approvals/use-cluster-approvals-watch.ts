import { useEffect } from 'react';
import { useAppStore } from '../../store/use-app-store';

/** Keeps the cluster's waiting approvals current, in the approval dialog's queue, for as long as the caller is mounted. */
export function useClusterApprovalsWatch(): void {
  const watchClusterApprovals = useAppStore((state) => state.watchClusterApprovals);
  useEffect(() => watchClusterApprovals(), [watchClusterApprovals]);
}
