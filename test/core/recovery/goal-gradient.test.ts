import { describe, expect, it } from 'vitest';
import { GoalGradient, STRATEGY_CHANGE } from '../../../src/core/recovery/goal-gradient';
import type { RunEvent } from '../../../src/shared/schemas/events';

describe('Goal Gradient Solver', () => {
  it('keeps re-planning while each re-plan shrinks the gap by at least 0.05', () => {
    const gradient = new GoalGradient();
    for (const gap of [0.8, 0.6, 0.4, 0.3]) {
      gradient.record(gap);
      expect(gradient.next()).toBe('replan');
      gradient.noteRevision(false);
    }
  });

  it('two re-plans without progress ask for a change of strategy; one that stalls too escalates; one that helps resumes plain re-planning', () => {
    const stalled = new GoalGradient();
    stalled.record(0.5);
    stalled.noteRevision(false);
    expect(stalled.record(0.48)).toEqual({ gap: 0.48, delta: -0.02, after: 'failure' });
    expect(stalled.next()).toBe('replan');
    stalled.noteRevision(false);
    stalled.record(0.5);
    expect(stalled.next()).toBe('change_strategy');
    stalled.noteRevision(true);
    stalled.record(0.5);
    expect(stalled.next()).toBe('escalate');

    const helped = new GoalGradient();
    helped.record(0.5);
    helped.noteRevision(false);
    helped.record(0.5);
    helped.noteRevision(false);
    helped.record(0.5);
    helped.noteRevision(true);
    helped.record(0.2);
    expect(helped.next()).toBe('replan');
  });

  it('measures after repairs are recorded but never judged: only re-plans count towards a stall, each against the gap at the failure it answered', () => {
    const gradient = new GoalGradient();
    gradient.record(0.5);
    for (const _replan of [1, 2]) {
      gradient.noteRevision(false);
      // The replacement's repair looks like progress; the next failure shows it was not.
      expect(gradient.record(0.3, 'repair')).toEqual({ gap: 0.3, delta: -0.2, after: 'repair' });
      expect(gradient.record(0.5)).toEqual({ gap: 0.5, delta: 0.2, after: 'failure' });
    }
    expect(gradient.trend).toEqual([0.5, 0.3, 0.5, 0.3, 0.5]);
    expect(gradient.next()).toBe('change_strategy');

    const repairsOnly = new GoalGradient();
    for (const gap of [0.5, 0.5, 0.5, 0.5]) repairsOnly.record(gap, 'repair');
    expect(repairsOnly.next()).toBe('replan');
  });

  it('a measure with no re-plan before it is not judged', () => {
    const gradient = new GoalGradient();
    gradient.record(0.5);
    gradient.record(0.5);
    gradient.record(0.5);
    expect(gradient.next()).toBe('replan');
  });

  it('is rebuilt on resume from the run\'s goal.progress and plan.revised events', () => {
    const base = { runId: 'r', ts: '2026-01-01T00:00:00.000Z' };
    const plan = { goal: 'g', steps: [{ id: 'a', description: 'a', dependencies: [] }] };
    const events: RunEvent[] = [
      { ...base, seq: 1, type: 'goal.progress', gap: 0.5, delta: null },
      { ...base, seq: 2, type: 'plan.revised', revision: 1, replaced: ['a'], added: ['a.r1'], reason: 'Step a failed', plan },
      { ...base, seq: 3, type: 'goal.progress', gap: 0.5, delta: 0 },
      { ...base, seq: 4, type: 'plan.revised', revision: 2, replaced: ['a.r1'], added: ['a.r2'], reason: 'Step a.r1 failed', plan },
      { ...base, seq: 5, type: 'goal.progress', gap: 0.5, delta: 0 },
      { ...base, seq: 6, type: 'plan.revised', revision: 3, replaced: ['a.r2'], added: ['a.r3'], reason: `${STRATEGY_CHANGE}: Step a.r2 failed`, plan },
    ];
    const gradient = GoalGradient.fromEvents(events);
    expect(gradient.trend).toEqual([0.5, 0.5, 0.5]);
    gradient.record(0.5);
    expect(gradient.next()).toBe('escalate');
  });
});
