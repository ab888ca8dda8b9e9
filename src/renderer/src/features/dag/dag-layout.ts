import dagre from '@dagrejs/dagre';
import type { PlanStep } from '../../../../shared/schemas/plan';

export const NODE_WIDTH = 220;
export const NODE_HEIGHT = 76;

/** Left-to-right positions for a plan's steps; computed once per plan, not per event. */
export function layoutPlan(steps: readonly Pick<PlanStep, 'id' | 'dependencies'>[]): Map<string, { x: number; y: number }> {
  const graph = new dagre.graphlib.Graph();
  graph.setGraph({ rankdir: 'LR', nodesep: 24, ranksep: 64 });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const step of steps) graph.setNode(step.id, { width: NODE_WIDTH, height: NODE_HEIGHT });
  for (const step of steps) for (const dependency of step.dependencies) if (graph.hasNode(dependency)) graph.setEdge(dependency, step.id);
  dagre.layout(graph);
  return new Map(steps.map((step) => {
    const node = graph.node(step.id);
    return [step.id, { x: node.x - NODE_WIDTH / 2, y: node.y - NODE_HEIGHT / 2 }];
  }));
}
