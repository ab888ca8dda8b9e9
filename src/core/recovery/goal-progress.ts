import { askCritic } from '../run/critic';
import type { RunContext } from '../run/run-context';
import { stateOf } from '../run/hooks';
import { GoalGradient, type MeasuredAfter } from './goal-gradient';
import type { PlanView } from '../run/plan-view';

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

/** The plan as the store holds it now (replaced steps left out): what a measure after a repair sees. */
function storedView(context: RunContext): PlanView | null {
  if (!context.plan) return null;
  const steps = context.runs.getSteps(context.runId).filter((step) => step.replacedIn === null);
  return { plan: context.plan, states: new Map(steps.map((step) => [step.spec.id, { status: step.status, result: step.result, ...(step.waived ? { waived: true } : {}) }])) };
}

/** The run's Goal Gradient Solver: its gap to the goal, measured after each failure and repair, replayed from its events when a process first needs it. */
export function gradientOf(context: RunContext): GoalGradient {
  return stateOf(context, 'goal-gradient', () => GoalGradient.fromEvents(context.runs.events(context.runId, Number.MAX_SAFE_INTEGER)));
}

/** Measures the run's gap after a failure or a repair, records it in the run's solver, and announces it (`goal.progress`). */
export async function measureProgress(context: RunContext, after: MeasuredAfter, view: PlanView | null = storedView(context)): Promise<void> {
  if (!view) return;
  context.events.append(context.runId, 'goal.progress', gradientOf(context).record(await measureGap(context, view), after));
}
