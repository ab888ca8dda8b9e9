import { planGraphErrors } from '../../shared/plan-graph';
import type { Plan } from '../../shared/schemas/plan';
import { RoleRegistry } from '../roles/role-registry';
import { MAX_SUBAGENT_DEPTH } from '../../shared/schemas/roles';
import type { RunOptions } from '../../shared/schemas/run';
import { DEFAULT_SETTINGS } from '../../shared/schemas/settings';
import type { ToolRegistry } from '../tools/tool-registry';

/** The most steps a run's plan may have: its own cap (`--max-steps`, else Settings.maxPlanSteps when it started), else the default. */
export function planStepCap(options: Pick<RunOptions, 'maxPlanSteps'>): number {
  return options.maxPlanSteps ?? DEFAULT_SETTINGS.maxPlanSteps;
}

/**
 * Everything wrong with a plan as a DAG, each as a sentence the model can act on: duplicate ids,
 * unknown dependencies, a cycle (named), unknown tools or bad direct arguments, too many steps, a
 * role not in the registry or a direct call its role may not make, a sub-agent step in a run already
 * at MAX_SUBAGENT_DEPTH (`depth`: the planning run's).
 */
export function validatePlan(
  plan: Plan,
  tools: ToolRegistry,
  { maxSteps = DEFAULT_SETTINGS.maxPlanSteps, roles = new RoleRegistry(), depth = 0 }: { maxSteps?: number; roles?: RoleRegistry; depth?: number } = {},
): string[] {
  const errors: string[] = [];
  if (plan.steps.length > maxSteps) {
    errors.push(`The plan has ${plan.steps.length} steps; at most ${maxSteps} are allowed (the operator raises this with Settings.maxPlanSteps or \`archon run --max-steps\`, up to 1000). Merge related steps.`);
  }
  errors.push(...planGraphErrors(plan.steps));
  for (const step of plan.steps) {
    if (step.kind === 'subagent' && depth >= MAX_SUBAGENT_DEPTH) {
      errors.push(`Step "${step.id}" is a sub-agent step, but this run is a sub-agent at depth ${depth}, the deepest allowed (${MAX_SUBAGENT_DEPTH}); do its work in ordinary steps.`);
    }
    if (step.tool !== undefined) {
      if (!tools.get(step.tool)) errors.push(`Step "${step.id}" names the tool "${step.tool}", which does not exist. Available tools: ${tools.names().join(', ') || 'none'}.`);
      else if (step.args !== undefined) {
        const prepared = tools.prepare(step.tool, step.args);
        if (!prepared.ok) errors.push(`Step "${step.id}": ${prepared.result.content}`);
      }
    }
  }
  errors.push(...roles.planErrors(plan));
  return errors;
}
