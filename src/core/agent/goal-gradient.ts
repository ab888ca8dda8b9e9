import type { RunEvent } from '../../shared/schemas/events';
import { askCritic } from '../validation/critic';
import type { RunContext } from './run-context';
import type { PlanView } from './scheduler';

/** A re-plan must shrink the gap by at least this much to count as progress (RP-04). */
export const MIN_PROGRESS = 0.05;
/** Consecutive re-plans without progress after which plain re-planning stops (RP-04: 2). */
export const STALL_LIMIT = 2;
/** Marks a revision that changed strategy, in its `plan.revised` reason (read back on resume). */
export const STRATEGY_CHANGE = 'Change of strategy';

/** What the next correction must be: a plain re-plan, one that changes strategy, or the operator. */
export type Correction = 'replan' | 'change_strategy' | 'escalate';

/**
 * Share of the plan's steps that have not completed (a step the operator waived counts as done):
 * the gap to the goal when verification is by checks.
 */
export function unfinishedShare(view: PlanView): number {
  const steps = view.plan.steps;
  const done = steps.filter((step) => view.states.get(step.id)?.status === 'completed' || view.states.get(step.id)?.waived === true).length;
  return steps.length === 0 ? 0 : Math.round(((steps.length - done) / steps.length) * 1000) / 1000;
}

/** What the critic judges when it measures the run's gap to its goal. */
export const GOAL_CRITERIA = 'The goal is reached: every part of it is done, by the results below, with nothing left out.';

/**
 * The run's gap to its goal: with verification `critic`, the critic's gap on the goal's success
 * criteria given the results so far (the unfinished share when it gives no readable verdict);
 * otherwise the share of the plan's steps not completed.
 */
export async function measureGap(context: RunContext, view: PlanView): Promise<number> {
  if (context.options.verification !== 'critic') return unfinishedShare(view);
  const results = view.plan.steps.map((step) => {
    const state = view.states.get(step.id);
    return `${step.id} (${step.description}): ${state?.status === 'completed' ? (state.result ?? '') : `not done (${state?.status ?? 'pending'})`}`;
  });
  const answer = await askCritic(context, { task: context.goal, criteria: GOAL_CRITERIA, subject: results.join('\n'), evidence: [], stepId: null });
  return answer.readable ? answer.verdict.gap : unfinishedShare(view);
}

/** What a measure follows: a failed step (before its re-plan), or a repair of a step's result. */
export type MeasuredAfter = 'failure' | 'repair';

/**
 * The Goal Gradient Solver (seed 002): the run's gap to its goal, measured after each failure and each
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

/** The plan as the store holds it now (replaced steps left out): what a measure after a repair sees. */
function storedView(context: RunContext): PlanView | null {
  if (!context.plan) return null;
  const steps = context.runs.getSteps(context.runId).filter((step) => step.replacedIn === null);
  return { plan: context.plan, states: new Map(steps.map((step) => [step.spec.id, { status: step.status, result: step.result, ...(step.waived ? { waived: true } : {}) }])) };
}

/** Measures the run's gap after a failure or a repair, records it in the run's solver, and announces it (`goal.progress`). */
export async function measureProgress(context: RunContext, after: MeasuredAfter, view: PlanView | null = storedView(context)): Promise<void> {
  if (!view) return;
  context.events.append(context.runId, 'goal.progress', context.gradient.record(await measureGap(context, view), after));
}
