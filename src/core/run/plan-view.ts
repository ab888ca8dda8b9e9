import type { ArchonError } from '../../shared/errors';
import type { Plan, PlanStep } from '../../shared/schemas/plan';
import type { StepStatus } from '../../shared/schemas/run';

/** A plan as it runs: each step's state and outcome. */
export interface StepState {
  status: StepStatus;
  result: string | null;
  /** Skipped by the operator's choice: the steps after it run without its result. */
  waived?: boolean;
}

export interface PlanView {
  plan: Plan;
  states: ReadonlyMap<string, StepState>;
}

export type StepOutcome = { status: 'completed'; result: string } | { status: 'failed'; reason: string };

/** A step's outcome as its result message says it. */
export function describeOutcome(outcome: StepOutcome): string {
  return outcome.status === 'completed' ? outcome.result : `failed: ${outcome.reason}`;
}

/**
 * What happens after a step failed, as its recovery decided: the plan revised (the failed step and its
 * not-yet-started dependants replaced), the step run again (perhaps as the operator edited it),
 * skipped with its dependants running without it, or the run ended. `null`: nothing more to try, the
 * steps downstream are skipped.
 */
export type Recovery =
  /** Already stored: the replaced steps that had not started are marked skipped (REPLACED). */
  | { kind: 'revise'; plan: Plan; replaced: readonly string[] }
  | { kind: 'retry'; step: PlanStep }
  | { kind: 'skip' }
  | { kind: 'end'; error: ArchonError }
  | null;

/**
 * Asked, one failure at a time, while the branches that do not depend on the failed step keep running.
 * `resumed`: the failure was stored by an earlier process, which ended before its recovery did.
 */
export type Recover = (failed: PlanStep, reason: string, view: PlanView, resumed?: boolean) => Promise<Recovery>;

/** Why a step that had not started left the plan. */
export const REPLACED = 'Replaced by a revised plan.';
