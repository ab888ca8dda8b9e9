import { planGraphErrors } from '../../shared/plan-graph';
import type { Plan } from '../../shared/schemas/plan';
import type { RunOptions } from '../../shared/schemas/run';
import { DEFAULT_SETTINGS } from '../../shared/schemas/settings';
import type { ToolRegistry } from '../tools/tool-registry';

/** The most steps a run's plan may have: its own cap (`--max-steps`, else Settings.maxPlanSteps when it started), else the default. */
export function planStepCap(options: Pick<RunOptions, 'maxPlanSteps'>): number {
  return options.maxPlanSteps ?? DEFAULT_SETTINGS.maxPlanSteps;
}

/**
 * Everything wrong with a plan as a DAG, each as a sentence the model can act on: duplicate ids,
 * unknown dependencies, a cycle (named), unknown tools or bad direct arguments, too many steps.
 */
export function validatePlan(plan: Plan, tools: ToolRegistry, maxSteps = DEFAULT_SETTINGS.maxPlanSteps): string[] {
  const errors: string[] = [];
  if (plan.steps.length > maxSteps) {
    errors.push(`The plan has ${plan.steps.length} steps; at most ${maxSteps} are allowed (the operator raises this with Settings.maxPlanSteps or \`archon run --max-steps\`, up to 1000). Merge related steps.`);
  }
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

/** Ids of every step that depends, directly or not, on `stepId`. */
export function dependentsOf(plan: Plan, stepId: string): string[] {
  const found = new Set<string>();
  const queue = [stepId];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const step of plan.steps) {
      if (step.dependencies.includes(next) && !found.has(step.id)) {
        found.add(step.id);
        queue.push(step.id);
      }
    }
  }
  return [...found];
}
