import { useMemo } from 'react';
import { useShallow } from 'zustand/react/shallow';
import type { RunSummary } from '../../../../shared/schemas/run';
import { useAppStore } from '../../store/use-app-store';
import { shownListedRun, type LiveInputs, type ShownRun } from './live-summary';

/** The store's live state of runs, read by the list, the header and the day's totals alike. */
export function useLiveInputs(): LiveInputs {
  const { runs, live, control, pending, now } = useAppStore(useShallow((state) => ({ runs: state.runs, live: state.live, control: state.control, pending: state.pending, now: state.now })));
  return useMemo(() => ({ runs, live, control, now, awaiting: new Set(pending.map((request) => request.runId)) }), [runs, live, control, pending, now]);
}

/** A run as listed (or as opened, before the list has it), with what its events said since. */
export function useShownRun(run: RunSummary): ShownRun {
  return shownListedRun(useLiveInputs(), run);
}
