import type { RunEvent } from '../../../../shared/schemas/events';
import type { PlanStep } from '../../../../shared/schemas/plan';
import type { StepView } from '../../../../shared/schemas/run-detail';

export type StepVerdict = Extract<RunEvent, { type: 'validation.completed' }>;

/** What validation and recovery did to one step, as its events tell it. */
export interface StepRecovery {
  /** The validators' verdicts on the step's results, oldest first. */
  verdicts: StepVerdict[];
  /** Why each repair sent the step back to its model, oldest first. */
  repairs: string[];
  /** The plan revision that added the step; null for a step of the first plan. */
  revision: number | null;
  /** The steps a scoped re-plan put in this one's place; null while it stands. */
  replacedBy: string[] | null;
}

export interface RunRecovery {
  steps: ReadonlyMap<string, StepRecovery>;
  /** The Goal Gradient Solver's gaps, oldest first (0 reached, 1 nowhere). */
  gapTrend: number[];
  /** Each replaced step as the plan that had it described it, so it stays on the graph after its plan is gone. */
  replacedSpecs: ReadonlyMap<string, PlanStep>;
}

const EMPTY: StepRecovery = { verdicts: [], repairs: [], revision: null, replacedBy: null };

/** Folds a run's events into verdicts, repairs and revisions per step, and the gap trend. */
export function recoveryOf(events: readonly RunEvent[]): RunRecovery {
  const steps = new Map<string, StepRecovery>();
  const specs = new Map<string, PlanStep>();
  const replacedSpecs = new Map<string, PlanStep>();
  const gapTrend: number[] = [];
  const update = (id: string, change: (current: StepRecovery) => Partial<StepRecovery>) => {
    const current = steps.get(id) ?? EMPTY;
    steps.set(id, { ...current, ...change(current) });
  };
  for (const event of events) {
    if (event.type === 'plan.ready') for (const step of event.plan.steps) specs.set(step.id, step);
    else if (event.type === 'validation.completed' && event.stepId) update(event.stepId, (current) => ({ verdicts: [...current.verdicts, event] }));
    else if (event.type === 'step.retried') update(event.stepId, (current) => ({ repairs: [...current.repairs, event.reason] }));
    else if (event.type === 'goal.progress') gapTrend.push(event.gap);
    else if (event.type === 'plan.revised') {
      for (const id of event.replaced.filter((replaced) => !event.added.includes(replaced))) {
        update(id, () => ({ replacedBy: event.added }));
        const spec = specs.get(id);
        if (spec) replacedSpecs.set(id, spec);
      }
      for (const id of event.added) {
        update(id, () => ({ revision: event.revision, replacedBy: null }));
        replacedSpecs.delete(id);
      }
      for (const step of event.plan.steps) specs.set(step.id, step);
    }
  }
  return { steps, gapTrend, replacedSpecs };
}

export function recoveryOfStep(recovery: RunRecovery, stepId: string): StepRecovery {
  return recovery.steps.get(stepId) ?? EMPTY;
}

/**
 * The steps the graph shows: the current plan's, and before them the steps a re-plan replaced that
 * the current plan no longer holds, with the status their own events left them in.
 */
export function stepsWithReplaced(steps: readonly StepView[], events: readonly RunEvent[], recovery: RunRecovery): readonly StepView[] {
  const current = new Set(steps.map((step) => step.spec.id));
  const gone = [...recovery.replacedSpecs.values()].filter((spec) => !current.has(spec.id));
  if (gone.length === 0) return steps;
  const lastStatus = (id: string): StepView['status'] => {
    const last = events.findLast((event) => 'stepId' in event && event.stepId === id && (event.type === 'step.started' || event.type === 'step.completed' || event.type === 'step.failed' || event.type === 'step.skipped'));
    if (!last) return 'pending';
    return last.type === 'step.completed' ? 'completed' : last.type === 'step.skipped' ? 'skipped' : 'failed';
  };
  return [...gone.map((spec) => ({ spec, status: lastStatus(spec.id), result: null, error: null })), ...steps];
}

/** "0.60 → 0.45 → 0.45": a gap trend as text. */
export function formatTrend(gaps: readonly number[]): string {
  return gaps.map((gap) => gap.toFixed(2)).join(' → ');
}
