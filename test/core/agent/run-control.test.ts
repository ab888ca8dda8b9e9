import { describe, expect, it } from 'vitest';
import { requestRunStop } from '../../../src/core/agent/run-control';
import { leaseRun } from '../../../src/core/agent/run-lease';
import { useRuntimes } from '../../support/runtime';

const openRuntime = useRuntimes();
const OPTIONS = { modelUrl: 'http://127.0.0.1:1/v1', model: '', policy: 'balanced' as const, concurrency: null, maxTokens: null, maxCostUsd: null, workspace: '/tmp', maxIterations: 10, verification: 'checks' as const, repairBudget: 2, maxReplans: 3 };

function withRuns(...ids: string[]) {
  const { runs } = openRuntime().store;
  for (const id of ids) runs.createRun({ id, goal: `goal ${id}`, policy: 'balanced', options: OPTIONS, now: new Date().toISOString() });
  return runs;
}

describe('per-run stop requests', () => {
  it('resolves a unique prefix, refuses an ambiguous one and an unknown id', () => {
    const runs = withRuns('abcdefgh1-one', 'abcdefgh2-two');
    const lease = leaseRun(runs, 'abcdefgh1-one');
    try {
      expect(requestRunStop(runs, 'abcdefgh1', 'the operator')).toEqual({ runId: 'abcdefgh1-one' });
      expect(runs.controlRequest('abcdefgh1-one')).toEqual({ action: 'stop', by: 'the operator' });
      expect(() => requestRunStop(runs, 'abcdefgh', 'the operator')).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED', message: expect.stringContaining('More than one run starts with abcdefgh') }));
      expect(() => requestRunStop(runs, 'zzzzzzzz', 'the operator')).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
      expect(() => requestRunStop(runs, 'abcdefg%', 'the operator')).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
    } finally {
      lease.release();
    }
  });

  it('refuses a run no process drives, saying so; a process taking the run clears an old request', () => {
    const runs = withRuns('idle-run');
    expect(() => requestRunStop(runs, 'idle-run', 'the operator')).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED', message: expect.stringContaining('is not running') }));
    runs.requestControl('idle-run', { action: 'stop', by: 'the operator' });
    leaseRun(runs, 'idle-run').release();
    expect(runs.controlRequest('idle-run')).toBeNull();
  });
});
