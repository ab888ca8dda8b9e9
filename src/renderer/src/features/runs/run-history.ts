import type { RunSummary } from '../../../../shared/schemas/run';
import { MAX_SUBAGENT_DEPTH } from '../../../../shared/schemas/roles';

export interface HistoryRow {
  run: RunSummary;
  /** 0 for a run the operator started; 1… for a sub-agent's run, listed under its parent. */
  depth: number;
}

/** The history in its order, each sub-agent's run right under its parent's (a child whose parent is not listed stays where it is, marked). */
export function historyRows(runs: readonly RunSummary[]): HistoryRow[] {
  const listed = new Set(runs.map((run) => run.id));
  const children = new Map<string, RunSummary[]>();
  for (const run of runs) if (run.parentRunId && listed.has(run.parentRunId)) children.set(run.parentRunId, [...(children.get(run.parentRunId) ?? []), run]);
  const rows: HistoryRow[] = [];
  const add = (run: RunSummary, depth: number): void => {
    rows.push({ run, depth });
    if (depth < MAX_SUBAGENT_DEPTH) for (const child of children.get(run.id) ?? []) add(child, depth + 1);
  };
  for (const run of runs) if (!run.parentRunId || !listed.has(run.parentRunId)) add(run, run.parentRunId ? 1 : 0);
  return rows;
}
