import type { Plan, PlanStep } from '../../shared/schemas/plan';
import type { RunOptions } from '../../shared/schemas/run';
import type { ValidationCheck, Verdict } from '../../shared/schemas/validation';
import type { RunEventLog } from '../events/run-event-log';

export interface PlanVerdict {
  verdict: Verdict;
  /** Share of the checks that failed. */
  gap: number;
  reasons: string[];
  checks: ValidationCheck[];
}

function normalized(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

function check(name: string, problems: string[]): ValidationCheck {
  return problems.length === 0 ? { name, passed: true } : { name, passed: false, detail: problems.join(' ') };
}

function missingOutputs(plan: Plan): string[] {
  return plan.steps.filter((step) => !step.expected_output?.trim()).map((step) => `Step "${step.id}" does not say what it should produce (expected_output).`);
}

/**
 * In a plan that converges on one final step, a step that needs nothing and that nothing needs
 * bypasses it: its result reaches the final step by no path.
 */
function orphans(plan: Plan): string[] {
  const needed = new Set(plan.steps.flatMap((step) => step.dependencies));
  const isolated = plan.steps.filter((step) => step.dependencies.length === 0 && !needed.has(step.id));
  const finalSteps = plan.steps.filter((step) => step.dependencies.length > 0 && !needed.has(step.id));
  if (finalSteps.length !== 1) return [];
  return isolated.map((step) => `Step "${step.id}" is linked to no other step; its result does not reach the final step "${finalSteps[0]?.id ?? ''}".`);
}

function sameWork(a: PlanStep, b: PlanStep): boolean {
  if (normalized(a.description) === normalized(b.description)) return true;
  return a.tool !== undefined && a.tool === b.tool && a.args !== undefined && JSON.stringify(a.args) === JSON.stringify(b.args);
}

function duplicates(plan: Plan): string[] {
  const found: string[] = [];
  plan.steps.forEach((step, index) => {
    const twin = plan.steps.slice(0, index).find((earlier) => sameWork(earlier, step));
    if (twin) found.push(`Steps "${twin.id}" and "${step.id}" do the same thing.`);
  });
  return found;
}

/**
 * The Meta-Validator's deterministic checks of a plan before a person sees it (seed 002): every step
 * has a description and an expected output, no step is left unlinked, no two steps do the same.
 */
export function metaValidate(plan: Plan): PlanVerdict {
  const checks = [
    check('descriptions', plan.steps.filter((step) => !step.description.trim()).map((step) => `Step "${step.id}" has no description.`)),
    check('expected_outputs', missingOutputs(plan)),
    check('no_orphans', orphans(plan)),
    check('no_duplicates', duplicates(plan)),
  ];
  const failed = checks.filter((item) => !item.passed);
  return {
    verdict: failed.length === 0 ? 'pass' : 'fail',
    gap: Math.round((failed.length / checks.length) * 100) / 100,
    reasons: failed.map((item) => item.detail ?? item.name),
    checks,
  };
}

/** Checks a plan and announces the verdict (`validation.completed` with `stepId: null`) before anyone is shown it; nothing when verification is off. */
export function announcePlanVerdict(context: { runId: string; events: RunEventLog; options: Pick<RunOptions, 'verification'> }, plan: Plan): PlanVerdict | null {
  if (context.options.verification === 'off') return null;
  const verdict = metaValidate(plan);
  context.events.append(context.runId, 'validation.completed', { stepId: null, verdict: verdict.verdict, gap: verdict.gap, confidence: null, reasons: verdict.reasons, checks: verdict.checks });
  return verdict;
}
