import type { Plan, PlanStep } from '../../shared/schemas/plan';
import type { ToolRegistry } from '../tools/tool-registry';

export const MAX_PLAN_STEPS = 64;

function findCycle(steps: readonly PlanStep[]): string[] | null {
  const byId = new Map(steps.map((step) => [step.id, step]));
  const state = new Map<string, 'visiting' | 'done'>();
  const path: string[] = [];
  const visit = (id: string): string[] | null => {
    if (state.get(id) === 'done') return null;
    if (state.get(id) === 'visiting') return [...path.slice(path.indexOf(id)), id];
    state.set(id, 'visiting');
    path.push(id);
    for (const dependency of byId.get(id)?.dependencies ?? []) {
      if (!byId.has(dependency)) continue;
      const cycle = visit(dependency);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(id, 'done');
    return null;
  };
  for (const step of steps) {
    const cycle = visit(step.id);
    if (cycle) return cycle.reverse();
  }
  return null;
}

/**
 * Everything wrong with a plan as a DAG, each as a sentence the model can act on: duplicate ids,
 * unknown dependencies, a cycle (named), unknown tools or bad direct arguments, too many steps.
 */
export function validatePlan(plan: Plan, tools: ToolRegistry, maxSteps = MAX_PLAN_STEPS): string[] {
  const errors: string[] = [];
  if (plan.steps.length > maxSteps) errors.push(`The plan has ${plan.steps.length} steps; at most ${maxSteps} are allowed. Merge related steps.`);
  const ids = new Set<string>();
  for (const step of plan.steps) {
    if (ids.has(step.id)) errors.push(`Two steps have the id "${step.id}"; ids must be unique.`);
    ids.add(step.id);
  }
  for (const step of plan.steps) {
    for (const dependency of step.dependencies) {
      if (!ids.has(dependency)) errors.push(`Step "${step.id}" depends on "${dependency}", which is not a step of the plan.`);
    }
    if (step.tool !== undefined) {
      if (!tools.get(step.tool)) errors.push(`Step "${step.id}" names the tool "${step.tool}", which does not exist. Available tools: ${tools.names().join(', ') || 'none'}.`);
      else if (step.args !== undefined) {
        const prepared = tools.prepare(step.tool, step.args);
        if (!prepared.ok) errors.push(`Step "${step.id}": ${prepared.result.content}`);
      }
    }
  }
  const cycle = findCycle(plan.steps);
  if (cycle) errors.push(`The plan has a cycle: ${cycle.join(' → ')}. A step cannot depend, directly or not, on itself; remove one of these dependencies.`);
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
