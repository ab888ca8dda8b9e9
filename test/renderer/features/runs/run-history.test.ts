import { describe, expect, it } from 'vitest';
import { historyRows } from '../../../../src/renderer/src/features/runs/run-history';
import { RunSummarySchema, type RunSummary } from '../../../../src/shared/schemas/run';

function run(id: string, parentRunId?: string): RunSummary {
  return RunSummarySchema.parse({ id, goal: `goal ${id}`, status: 'completed', policy: 'balanced', createdAt: '2026-11-23T08:00:00.000Z', updatedAt: '2026-11-23T08:00:01.000Z', tokens: 0, costUsd: 0, answer: null, error: null, parentRunId });
}

describe('the run history lists sub-agent runs under their parent', () => {
  it('puts each child right under its parent (newest first as listed), a grandchild under its child, and marks them by depth', () => {
    // Newest first, as the store lists them: children start after their parent, so they come first.
    const rows = historyRows([run('other'), run('grandchild', 'child-b'), run('child-b', 'parent'), run('child-a', 'parent'), run('parent')]);
    expect(rows.map(({ run: { id }, depth }) => `${id}:${depth}`)).toEqual(['other:0', 'parent:0', 'child-b:1', 'grandchild:2', 'child-a:1']);
  });

  it('keeps a child whose parent is not listed (deleted, or beyond the page), marked as a sub-agent run', () => {
    expect(historyRows([run('orphan', 'gone'), run('top')]).map(({ run: { id }, depth }) => `${id}:${depth}`)).toEqual(['orphan:1', 'top:0']);
  });
});
