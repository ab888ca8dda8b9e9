import { describe, expect, it } from 'vitest';
import type { StepView } from '../../../../src/shared/schemas/run-detail';
import { formatTrend, recoveryOf, recoveryOfStep, stepsWithReplaced } from '../../../../src/renderer/src/features/validation/validation-model';
import { FIRST_PLAN, recoveredRunEvents, REVISED_PLAN } from './recovered-run';

const events = recoveredRunEvents('r', 'a table of totals');
const view = (spec: (typeof FIRST_PLAN)[number], status: StepView['status']): StepView => ({ spec, status, result: null, error: null });

describe('validation and recovery as the app reads them', () => {
  it('folds verdicts, repairs, revisions and the gap trend per step', () => {
    const recovery = recoveryOf(events);
    const draft = recoveryOfStep(recovery, 'draft');
    expect(draft.verdicts.map((verdict) => [verdict.verdict, verdict.gap])).toEqual([['fail', 0.6], ['fail', 0.55]]);
    expect(draft.repairs).toEqual(['The table has no totals row']);
    expect(draft.replacedBy).toEqual(['draft2', 'review2']);
    expect(recoveryOfStep(recovery, 'review').replacedBy).toEqual(['draft2', 'review2']);
    expect(recoveryOfStep(recovery, 'draft2')).toMatchObject({ revision: 1, replacedBy: null, repairs: [] });
    expect(recoveryOfStep(recovery, 'gather')).toMatchObject({ revision: null, replacedBy: null });
    expect(formatTrend(recovery.gapTrend)).toBe('0.60 → 0.45 → 0.45');
  });

  it('keeps replaced steps on the graph when the current plan no longer holds them, with the status their events left', () => {
    const current = REVISED_PLAN.map((spec) => view(spec, 'completed'));
    const shown = stepsWithReplaced(current, events, recoveryOf(events));
    expect(shown.map((step) => [step.spec.id, step.status])).toEqual([
      ['draft', 'failed'],
      ['review', 'pending'],
      ['gather', 'completed'],
      ['draft2', 'completed'],
      ['review2', 'completed'],
    ]);
    expect(shown[0]?.spec).toEqual(FIRST_PLAN[1]);
  });

  it('adds nothing when the replaced steps are still among the run\'s steps', () => {
    const current = [...FIRST_PLAN, ...REVISED_PLAN.slice(1)].map((spec) => view(spec, 'completed'));
    expect(stepsWithReplaced(current, events, recoveryOf(events))).toEqual(current);
  });

  it('treats a step that a revision replaces and adds again under the same id as standing', () => {
    const same = events.map((event) => (event.type === 'plan.revised' ? { ...event, replaced: ['draft'], added: ['draft'] } : event));
    expect(recoveryOfStep(recoveryOf(same), 'draft')).toMatchObject({ revision: 1, replacedBy: null });
  });
});
