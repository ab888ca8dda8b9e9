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

/** How many downstream ids an approval packet names; `downstreamCount` tells how many there are in all. */
export const DOWNSTREAM_SHOWN = 10;

/**
 * A plan's steps by id and its reverse adjacency (who depends on whom), built once per plan revision:
 * plans are replaced, never changed in place, so `planIndex` keys it on the steps array it was built from.
 */
export class PlanIndex {
  readonly byId: ReadonlyMap<string, PlanStep>;
  /** Each step's place in the plan's order. */
  readonly position: ReadonlyMap<string, number>;
  private readonly dependents = new Map<string, string[]>();

  constructor(steps: readonly PlanStep[]) {
    this.byId = new Map(steps.map((step) => [step.id, step]));
    this.position = new Map(steps.map((step, position) => [step.id, position]));
    for (const step of steps) {
      for (const dependency of step.dependencies) {
        const list = this.dependents.get(dependency);
        if (list) list.push(step.id);
        else this.dependents.set(dependency, [step.id]);
      }
    }
  }

  /** Ids of the steps that name `stepId` among their dependencies, in plan order. */
  dependentsOf(stepId: string): readonly string[] {
    return this.dependents.get(stepId) ?? [];
  }

  /** Ids of every step that depends, directly or not, on `stepId`, nearest first; each edge is visited once. */
  downstreamOf(stepId: string): string[] {
    const found = new Set<string>();
    const queue = [stepId];
    for (let at = 0; at < queue.length; at++) {
      for (const id of this.dependents.get(queue[at] as string) ?? []) {
        if (found.has(id) || id === stepId) continue;
        found.add(id);
        queue.push(id);
      }
    }
    return [...found];
  }

  /** What an approval packet carries of the steps after `stepId`: the first DOWNSTREAM_SHOWN ids and how many there are. */
  downstreamSummary(stepId: string): { downstream: string[]; downstreamCount: number } {
    const all = this.downstreamOf(stepId);
    return { downstream: all.slice(0, DOWNSTREAM_SHOWN), downstreamCount: all.length };
  }

  /**
   * The most steps of one level of the DAG (a step's level: one past its deepest dependency), in one
   * pass over the edges. Unknown dependencies are ignored; a cycle's steps are left out (such a plan is refused anyway).
   */
  widestLevel(): number {
    const waiting = new Map([...this.byId.values()].map((step) => [step.id, step.dependencies.filter((dependency) => this.byId.has(dependency)).length]));
    let level = [...waiting].filter(([, count]) => count === 0).map(([id]) => id);
    let widest = 0;
    while (level.length > 0) {
      widest = Math.max(widest, level.length);
      const next: string[] = [];
      for (const id of level) {
        for (const dependant of this.dependents.get(id) ?? []) {
          const left = (waiting.get(dependant) ?? 0) - 1;
          waiting.set(dependant, left);
          if (left === 0) next.push(dependant);
        }
      }
      level = next;
    }
    return widest;
  }
}

const indexes = new WeakMap<readonly PlanStep[], PlanIndex>();

/** The index of a plan revision, built the first time it is asked for. */
export function planIndex(plan: { steps: readonly PlanStep[] }): PlanIndex {
  let index = indexes.get(plan.steps);
  if (!index) {
    index = new PlanIndex(plan.steps);
    indexes.set(plan.steps, index);
  }
  return index;
}
