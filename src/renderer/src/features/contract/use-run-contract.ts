import { useEffect, useState } from 'react';
import { runStateOf } from '../../../../shared/run-state';
import type { GoalContract } from '../../../../shared/schemas/goal-contract';
import { useAppStore } from '../../store/use-app-store';

/** A run's contract as last stated: the selected run's from the store, another run's fetched once. */
export function useRunContract(runId: string): GoalContract | null {
  const selected = useAppStore((state) => (state.detail?.run.id === runId ? state.detail.state.contract : undefined));
  const client = useAppStore((state) => state.client);
  const [fetched, setFetched] = useState<GoalContract | null>(null);
  const needsFetch = selected === undefined;
  useEffect(() => {
    if (!needsFetch) return;
    let current = true;
    void client.commands['runs.get']({ runId }).then(
      (detail) => current && setFetched(runStateOf(detail.events).contract),
      // Without the run's detail the dialog still shows the plan; only the contract is left out.
      () => undefined,
    );
    return () => {
      current = false;
    };
  }, [client, runId, needsFetch]);
  return selected === undefined ? fetched : selected;
}
