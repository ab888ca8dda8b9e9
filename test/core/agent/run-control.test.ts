import { describe, expect, it } from 'vitest';
import { requestRunControl, runControlError } from '../../../src/core/agent/run-control';
import { leaseRun } from '../../../src/core/run/run-lease';
import type { RunControl } from '../../../src/shared/schemas/run';
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
      expect(requestRunControl(runs, 'abcdefgh1', 'stop', 'the operator')).toEqual({ runId: 'abcdefgh1-one' });
      expect(runs.controlRequest('abcdefgh1-one')).toEqual({ action: 'stop', by: 'the operator' });
      expect(() => requestRunControl(runs, 'abcdefgh', 'stop', 'the operator')).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED', message: expect.stringContaining('More than one run starts with abcdefgh') }));
      expect(() => requestRunControl(runs, 'zzzzzzzz', 'stop', 'the operator')).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
      expect(() => requestRunControl(runs, 'abcdefg%', 'stop', 'the operator')).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
    } finally {
      lease.release();
    }
  });

  it('asks for a pause the same way; the driving run sees it as PAUSED, which names who asked and how to continue', () => {
    const runs = withRuns('pause-run');
    const lease = leaseRun(runs, 'pause-run');
    try {
      expect(requestRunControl(runs, 'pause-run', 'pause', 'the operator (archon pause)')).toEqual({ runId: 'pause-run' });
      const asked = runs.controlRequest('pause-run');
      expect(asked).toEqual({ action: 'pause', by: 'the operator (archon pause)' });
      expect(runControlError('pause-run', asked as RunControl)).toMatchObject({ code: 'PAUSED', message: expect.stringMatching(/^Paused by the operator \(archon pause\)\. `archon resume pause-run` continues it/) });
      expect(runControlError('pause-run', { action: 'stop', by: 'the operator' })).toMatchObject({ code: 'CANCELLED' });
    } finally {
      lease.release();
    }
  });

  it('refuses a run no process drives, saying so; a process taking the run clears an old request', () => {
    const runs = withRuns('idle-run');
    expect(() => requestRunControl(runs, 'idle-run', 'stop', 'the operator')).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED', message: expect.stringContaining('is not running') }));
    runs.requestControl('idle-run', { action: 'stop', by: 'the operator' });
    leaseRun(runs, 'idle-run').release();
    expect(runs.controlRequest('idle-run')).toBeNull();
  });
});
