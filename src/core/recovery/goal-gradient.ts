import { MIN_PROGRESS } from '../../shared/gap-trend';
import type { RunEvent } from '../../shared/schemas/events';

/** Consecutive re-plans without progress after which plain re-planning stops. */
export const STALL_LIMIT = 2;
/** Marks a revision that changed strategy, in its `plan.revised` reason (read back on resume). */
export const STRATEGY_CHANGE = 'Change of strategy';

/** What the next correction must be: a plain re-plan, one that changes strategy, or the operator. */
export type Correction = 'replan' | 'change_strategy' | 'escalate';

/** What a measure follows: a failed step (before its re-plan), or a repair of a step's result. */
export type MeasuredAfter = 'failure' | 'repair';

/**
 * The Goal Gradient Solver: the run's gap to its goal, measured after each failure and each
 * repair, and what that says about the next correction. Only re-plans are judged: a re-plan is progress
 * when the gap at the next failure is at least MIN_PROGRESS below the gap at the failure it answered
 * (measures after repairs in between are recorded, never judged). A gap that did not shrink on
 * STALL_LIMIT consecutive re-plans asks for a change of strategy, and a change of strategy that stalls
 * too goes to the operator.
 */
export class GoalGradient {
  private readonly gaps: number[] = [];
  private stalls = 0;
  /** The gap at the last failure: what the re-plan after it is judged against. */
  private baseline: number | null = null;
  private revisedSinceMeasure = false;
  private strategyPending = false;
  private strategyStalled = false;

  /** The solver as a run left it: replayed from its `goal.progress` and `plan.revised` events. */
  static fromEvents(events: readonly RunEvent[]): GoalGradient {
    const gradient = new GoalGradient();
    for (const event of events) {
      if (event.type === 'goal.progress') gradient.record(event.gap, event.after ?? 'failure');
      if (event.type === 'plan.revised') gradient.noteRevision(event.reason.startsWith(STRATEGY_CHANGE));
    }
    return gradient;
  }

  get trend(): readonly number[] {
    return this.gaps;
  }

  /** Records a measure (`delta` against the one before); a failure's measure judges the re-plan that came before it. */
  record(gap: number, after: MeasuredAfter = 'failure'): { gap: number; delta: number | null; after: MeasuredAfter } {
    const previous = this.gaps.at(-1);
    this.gaps.push(gap);
    const delta = previous === undefined ? null : Math.round((gap - previous) * 1000) / 1000;
    if (after === 'repair') return { gap, delta, after };
    if (this.revisedSinceMeasure) {
      const progressed = this.baseline !== null && Math.round((gap - this.baseline) * 1000) / 1000 <= -MIN_PROGRESS;
      this.stalls = progressed ? 0 : this.stalls + 1;
      this.strategyStalled = this.strategyPending && !progressed;
      this.strategyPending = false;
    }
    this.revisedSinceMeasure = false;
    this.baseline = gap;
    return { gap, delta, after };
  }

  noteRevision(changedStrategy: boolean): void {
    this.revisedSinceMeasure = true;
    this.strategyPending = changedStrategy;
  }

  next(): Correction {
    if (this.strategyStalled) return 'escalate';
    return this.stalls >= STALL_LIMIT ? 'change_strategy' : 'replan';
  }
}
