import dagre from '@dagrejs/dagre';
import type { PlanStep } from '../../../../shared/schemas/plan';

export const NODE_WIDTH = 240;
export const NODE_HEIGHT = 132;
/** The smallest text a node shows (its body; the title is larger): what the minimum zoom keeps readable. */
export const NODE_TEXT_PX = 13;

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Not a step: the source of every root, so that the ranker puts every root in the first column. */
const ORIGIN = '\u0000origin';

/** Left-to-right positions for a plan's steps; computed once per plan, not per event. */
export function layoutPlan(steps: readonly Pick<PlanStep, 'id' | 'dependencies'>[]): Map<string, { x: number; y: number }> {
  const graph = new dagre.graphlib.Graph();
  graph.setGraph({ rankdir: 'LR', nodesep: 24, ranksep: 64 });
  graph.setDefaultEdgeLabel(() => ({}));
  graph.setNode(ORIGIN, { width: 0, height: 0 });
  for (const step of steps) graph.setNode(step.id, { width: NODE_WIDTH, height: NODE_HEIGHT });
  // Pulling a root one column left lengthens only its own out-edges; a weight above any out-degree makes that always worth it.
  const rootWeight = steps.length + 1;
  for (const step of steps) {
    const dependencies = step.dependencies.filter((dependency) => dependency !== step.id && graph.hasNode(dependency));
    if (dependencies.length === 0) graph.setEdge(ORIGIN, step.id, { weight: rootWeight });
    for (const dependency of dependencies) graph.setEdge(dependency, step.id);
  }
  dagre.layout(graph);
  return new Map(steps.map((step) => {
    const node = graph.node(step.id);
    return [step.id, { x: node.x - NODE_WIDTH / 2, y: node.y - NODE_HEIGHT / 2 }];
  }));
}

/** The rectangle the laid-out nodes cover, in flow coordinates. */
export function boundsOf(positions: ReadonlyMap<string, { x: number; y: number }>): Rect {
  const all = [...positions.values()];
  if (all.length === 0) return { x: 0, y: 0, width: NODE_WIDTH, height: NODE_HEIGHT };
  const x = Math.min(...all.map((position) => position.x));
  const y = Math.min(...all.map((position) => position.y));
  return {
    x,
    y,
    width: Math.max(...all.map((position) => position.x)) + NODE_WIDTH - x,
    height: Math.max(...all.map((position) => position.y)) + NODE_HEIGHT - y,
  };
}
