import type { Plan, PlanStep } from '../../shared/schemas/plan';
import type { PlanVerdict, ValidationCheck } from '../../shared/schemas/validation';
import type { RunContext } from '../run/run-context';
import type { RoleRegistry } from '../roles/role-registry';
import { askCritic, type CriticAnswer } from '../run/critic';
import type { GoalContract } from '../../shared/schemas/goal-contract';
import { contractOf } from '../contract/contract-state';
import { uncoveredCriteria } from '../contract/plan-coverage';

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
 * The Meta-Validator's deterministic checks of a plan before a person sees it: every step
 * has a description and an expected output, no step is left unlinked, no two steps do the same,
 * and every file and command the goal's contract names is some step's work.
 */
export function metaValidate(plan: Plan, roles?: RoleRegistry, contract: GoalContract | null = null): PlanVerdict {
  const notes = roles?.undefinedRoleNotes(plan) ?? [];
  const checks = [
    check('descriptions', plan.steps.filter((step) => !step.description.trim()).map((step) => `Step "${step.id}" has no description.`)),
    check('expected_outputs', missingOutputs(plan)),
    check('no_orphans', orphans(plan)),
    check('no_duplicates', duplicates(plan)),
    check('covers_criteria', uncoveredCriteria(plan, contract).map((criterion) => `No step makes "${criterion.text}" true.`)),
  ];
  const failed = checks.filter((item) => !item.passed);
  return {
    verdict: failed.length === 0 ? 'pass' : 'fail',
    gap: Math.round((failed.length / checks.length) * 100) / 100,
    confidence: null,
    reasons: [...failed.map((item) => item.detail ?? item.name), ...notes],
    // A role no one defined is a note, not a failure: its step runs as the default role.
    checks: notes.length > 0 ? [...checks, { name: 'roles', passed: true, detail: notes.join(' ') }] : checks,
  };
}

/** What the critic judges a plan against. */
export const PLAN_CRITERIA = 'The plan covers the goal: done as described, its steps reach every part of the goal, with nothing left out and no step beside the point.';

function planText(plan: Plan): string {
  return plan.steps
    .map((step) => `${step.id}${step.dependencies.length > 0 ? ` (after ${step.dependencies.join(', ')})` : ''}: ${step.description}${step.tool ? ` [calls ${step.tool}]` : ''} -> ${step.expected_output ?? 'no expected output'}`)
    .join('\n');
}

/** The deterministic verdict joined with the critic's on whether the plan covers the goal (an unreadable critic fails that check). */
function withCritic(checked: PlanVerdict, answer: CriticAnswer): PlanVerdict {
  if (!answer.readable) {
    return { ...checked, verdict: 'fail', reasons: [...checked.reasons, answer.reason], checks: [...checked.checks, { name: 'covers_goal', passed: false, detail: answer.reason }] };
  }
  const { verdict, gap, reason, confidence } = answer.verdict;
  const check: ValidationCheck = verdict === 'pass' ? { name: 'covers_goal', passed: true } : { name: 'covers_goal', passed: false, detail: reason };
  return {
    verdict: checked.verdict === 'pass' && verdict === 'pass' ? 'pass' : 'fail',
    gap: Math.max(checked.gap, gap),
    confidence: confidence ?? null,
    reasons: [...checked.reasons, `Critic (${verdict}, gap ${gap}): ${reason}`],
    checks: [...checked.checks, check],
  };
}

/**
 * Checks a plan and announces the verdict (`validation.completed` with `stepId: null`) before anyone is
 * shown it: the deterministic checks, and with verification `critic` a critic's verdict on whether the
 * plan covers the goal (bounded by the critic's own retry cap). Nothing when verification is off.
 */
export async function announcePlanVerdict(context: RunContext, plan: Plan): Promise<PlanVerdict | null> {
  if (context.options.verification === 'off') return null;
  const checked = metaValidate(plan, context.roles.registry, contractOf(context));
  const verdict = context.options.verification === 'critic' ? withCritic(checked, await askCritic(context, { task: context.goal, criteria: PLAN_CRITERIA, subject: `Plan:\n${planText(plan)}`, evidence: [], stepId: null })) : checked;
  context.events.append(context.runId, 'validation.completed', { stepId: null, verdict: verdict.verdict, gap: verdict.gap, confidence: verdict.confidence, reasons: verdict.reasons, checks: verdict.checks });
  return verdict;
}
