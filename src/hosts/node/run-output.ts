import type { RunStatus } from '../../shared/schemas/run';

/** The exit code of a run that ended so, as `archon run` and `archon follow` end. */
export const EXIT_BY_STATUS: Partial<Record<RunStatus, number>> = { completed: 0, failed: 1, stopped: 3, budget_exhausted: 4, rejected: 5, paused: 6, completed_with_gaps: 7 };
