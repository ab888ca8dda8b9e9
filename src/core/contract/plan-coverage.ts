import type { Plan } from '../../shared/schemas/plan';
import type { Criterion, GoalContract } from '../../shared/schemas/goal-contract';

function stepText(plan: Plan): string {
  return plan.steps.map((step) => JSON.stringify(step)).join('\n').toLowerCase();
}

function named(text: string, name: string): boolean {
  const wanted = name.toLowerCase();
  const base = wanted.split('/').at(-1) ?? wanted;
  return text.includes(wanted) || text.includes(base);
}

/**
 * The contract's files and commands no step of the plan names: work the plan leaves out. Only what a
 * step can be seen to name is checked here; the rest is the outcome check's when the run ends.
 */
export function uncoveredCriteria(plan: Plan, contract: GoalContract | null): Criterion[] {
  if (!contract) return [];
  const text = stepText(plan);
  return contract.criteria.filter((criterion) => {
    if (criterion.kind === 'file_written') return !named(text, criterion.path);
    if (criterion.kind === 'command_succeeds') return !text.includes(criterion.command.toLowerCase());
    return false;
  });
}

/** What the planner is told when its plan leaves criteria out. */
export function coverageFeedback(missing: readonly Criterion[]): string {
  return `The plan leaves these success criteria of the goal to no step: ${missing.map((criterion) => criterion.text).join('; ')}. Plan steps that make each one true.`;
}

/** A plan made to cover the contract: one that leaves criteria to no step is sent back to the planner once, saying which. */
export async function planCoveringContract(contract: GoalContract | null, feedback: readonly string[], plan: (feedback: string[]) => Promise<Plan>): Promise<Plan> {
  const first = await plan([...feedback]);
  const missing = uncoveredCriteria(first, contract);
  return missing.length === 0 ? first : plan([...feedback, coverageFeedback(missing)]);
}
