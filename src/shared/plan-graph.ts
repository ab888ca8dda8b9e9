import type { PlanStep } from './schemas/plan';

/** Duplicate ids, unknown dependencies and cycles (named), as sentences: checked by the runtime and live in the plan editor. */
export function planGraphErrors(steps: readonly PlanStep[]): string[] {
  const errors: string[] = [];
  const ids = new Set<string>();
  for (const step of steps) {
    if (ids.has(step.id)) errors.push(`Two steps have the id "${step.id}"; ids must be unique.`);
    ids.add(step.id);
  }
  for (const step of steps) {
    for (const dependency of step.dependencies) {
      if (!ids.has(dependency)) errors.push(`Step "${step.id}" depends on "${dependency}", which is not a step of the plan.`);
    }
  }
  const cycle = findCycle(steps);
  if (cycle) errors.push(`The plan has a cycle: ${cycle.join(' → ')}. A step cannot depend, directly or not, on itself; remove one of these dependencies.`);
  return errors;
}

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
 * The most steps of one level of the DAG (a step's level: one past its deepest dependency), computed
 * in one pass over the steps and their dependencies. Unknown dependencies are ignored; a cycle's
 * steps are left out (a plan with one is refused anyway).
 */
export function widestLevel(steps: readonly PlanStep[]): number {
  const ids = new Set(steps.map((step) => step.id));
  const waiting = new Map(steps.map((step) => [step.id, step.dependencies.filter((dependency) => ids.has(dependency)).length]));
  const dependants = new Map<string, string[]>();
  for (const step of steps) {
    for (const dependency of step.dependencies) {
      if (!ids.has(dependency)) continue;
      const list = dependants.get(dependency);
      if (list) list.push(step.id);
      else dependants.set(dependency, [step.id]);
    }
  }
  let level = steps.filter((step) => waiting.get(step.id) === 0).map((step) => step.id);
  let widest = 0;
  while (level.length > 0) {
    widest = Math.max(widest, level.length);
    const next: string[] = [];
    for (const id of level) {
      for (const dependant of dependants.get(id) ?? []) {
        const left = (waiting.get(dependant) ?? 0) - 1;
        waiting.set(dependant, left);
        if (left === 0) next.push(dependant);
      }
    }
    level = next;
  }
  return widest;
}
