import { planGraphErrors } from '../../shared/plan-graph';
import type { Plan } from '../../shared/schemas/plan';
import type { ToolRegistry } from '../tools/tool-registry';

export const MAX_PLAN_STEPS = 64;

/**
 * Everything wrong with a plan as a DAG, each as a sentence the model can act on: duplicate ids,
 * unknown dependencies, a cycle (named), unknown tools or bad direct arguments, too many steps.
 */
export function validatePlan(plan: Plan, tools: ToolRegistry, maxSteps = MAX_PLAN_STEPS): string[] {
  const errors: string[] = [];
  if (plan.steps.length > maxSteps) errors.push(`The plan has ${plan.steps.length} steps; at most ${maxSteps} are allowed. Merge related steps.`);
  errors.push(...planGraphErrors(plan.steps));
  for (const step of plan.steps) {
    if (step.tool !== undefined) {
      if (!tools.get(step.tool)) errors.push(`Step "${step.id}" names the tool "${step.tool}", which does not exist. Available tools: ${tools.names().join(', ') || 'none'}.`);
      else if (step.args !== undefined) {
        const prepared = tools.prepare(step.tool, step.args);
        if (!prepared.ok) errors.push(`Step "${step.id}": ${prepared.result.content}`);
      }
    }
  }
  return errors;
}
