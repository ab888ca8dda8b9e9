import type { RunSummary } from '../../../../shared/schemas/run';

export interface RunsSlice {
  runs: RunSummary[];
}

export const initialRunsSlice: RunsSlice = { runs: [] };
