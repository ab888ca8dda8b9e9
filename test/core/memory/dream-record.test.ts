import { describe, expect, it } from 'vitest';
import { dreamRecord } from '../../../src/core/memory/dream-record';
import { dreamInputs } from '../../../src/core/memory/dreamer';
import type { Plan } from '../../../src/shared/schemas/plan';
import type { RunOptions } from '../../../src/shared/schemas/run';
import { useRuntimes } from '../../support/runtime';

const openRuntime = useRuntimes();

const options = { modelUrl: 'http://127.0.0.1:1/v1', model: 'm', policy: 'balanced', concurrency: null, maxTokens: null, maxCostUsd: null, workspace: '/tmp', maxIterations: 10, verification: 'checks', repairBudget: 2, maxReplans: 3 } as RunOptions;
const plan = (ids: string[]): Plan => ({ goal: 'g', steps: ids.map((id) => ({ id, description: `do ${id}`, dependencies: [] })) });

describe("a run's records as the Dreamer reads them", () => {
  it('names the re-plan the Goal Gradient Solver penalised (the gap did not shrink by 0.05) and not the one that made progress, with the failure reasons verbatim', () => {
    const runtime = openRuntime();
    runtime.store.runs.createRun({ id: 'run-a', goal: 'Report on the data', policy: 'balanced', options, now: new Date().toISOString() });
    const append = (type: string, body: object) => runtime.events.append('run-a', type as never, body as never);
    append('plan.ready', { plan: plan(['fetch', 'report']) });
    append('step.failed', { stepId: 'fetch', reason: 'loop_detected: read_file missing/data.csv' });
    append('goal.progress', { gap: 1, delta: null, after: 'failure' });
    append('plan.revised', { revision: 1, replaced: ['fetch'], added: ['fetch2'], reason: 'Failure reason: loop_detected', plan: plan(['fetch2', 'report']) });
    append('step.failed', { stepId: 'fetch2', reason: 'not_found: notes.csv' });
    append('goal.progress', { gap: 0.98, delta: -0.02, after: 'failure' });
    append('plan.revised', { revision: 2, replaced: ['fetch2'], added: ['rebuild'], reason: 'Change of strategy', plan: plan(['rebuild', 'report']) });
    append('step.failed', { stepId: 'rebuild', reason: 'timeout' });
    append('goal.progress', { gap: 0.5, delta: -0.48, after: 'failure' });
    runtime.events.flush();
    runtime.store.runs.setRunStatus('run-a', 'failed', new Date().toISOString(), { error: 'Step rebuild failed: timeout.' });

    const record = dreamRecord(runtime.store.runs, 'run-a') ?? '';
    expect(record).toContain('Run run-a (failed)');
    expect(record).toContain('Step fetch failed: loop_detected: read_file missing/data.csv');
    expect(record).toContain('Re-plan 1: fetch replaced by fetch2 because: Failure reason: loop_detected');
    expect(record).toContain('Penalised decomposition: revision 1 (fetch replaced by fetch2) left the gap to the goal at 0.98 from 1.');
    expect(record).not.toContain('Penalised decomposition: revision 2');
    expect(record).toContain('Ended failed: Step rebuild failed: timeout.');
    expect(record.split('\n').slice(2, 5)).toEqual(['Plan:', '  rebuild: do rebuild', '  report: do report']);
    expect(dreamRecord(runtime.store.runs, 'no-such-run')).toBeNull();
  });

  it('gives a run completed with gaps its answer and the gaps the operator accepted, and lets the Dreamer learn from it', () => {
    const runtime = openRuntime();
    runtime.store.runs.createRun({ id: 'run-g', goal: 'Summarise the survey', policy: 'balanced', options, now: new Date().toISOString() });
    runtime.events.append('run-g', 'run.completed', { answer: 'Twelve kestrels were counted.', gaps: ['the count per site is missing', 'no source is cited'] });
    runtime.events.flush();
    runtime.store.runs.setRunStatus('run-g', 'completed_with_gaps', new Date().toISOString(), { answer: 'Twelve kestrels were counted.' });

    const inputs = dreamInputs(runtime.store.runs, runtime.store.dreams);
    expect(inputs.map((input) => input.runId)).toEqual(['run-g']);
    const record = inputs[0]?.record ?? '';
    expect(record).toContain('Run run-g (completed_with_gaps)');
    expect(record).toContain('Answer: Twelve kestrels were counted.');
    expect(record).toContain('Accepted gaps: the count per site is missing; no source is cited');
    expect(record).not.toContain('no reason was recorded');
  });
});
