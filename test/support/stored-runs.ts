import { randomUUID } from 'node:crypto';
import { ArchonStore } from '../../src/core/store/archon-store';
import { RunOptionsSchema, type RunOptions, type RunStatus } from '../../src/shared/schemas/run';

/** Stored runs as the workers of a cluster (or a terminal, without `dispatch`) leave them, each ended after the one before; their ids. */
export function seedRuns(dataDir: string, runs: { goal: string; status: RunStatus; dispatch?: RunOptions['dispatch'] }[]): string[] {
  const store = ArchonStore.open(dataDir);
  try {
    return runs.map(({ goal, status, dispatch }) => {
      const id = randomUUID();
      const options = RunOptionsSchema.parse({ modelUrl: 'http://127.0.0.1:9/v1', model: 'scripted', policy: 'balanced', concurrency: null, maxTokens: null, maxCostUsd: null, workspace: dataDir, maxIterations: 5, ...(dispatch ? { dispatch } : {}) });
      const created = new Date().toISOString();
      store.runs.createRun({ id, goal, policy: 'balanced', options, now: created });
      // Strictly later than anything before it, so "the latest first" has one order.
      store.runs.setRunStatus(id, status, new Date(Date.parse(created) + 1).toISOString());
      return id;
    });
  } finally {
    store.close();
  }
}
