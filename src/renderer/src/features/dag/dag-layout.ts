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

export interface Point {
  x: number;
  y: number;
}

export interface Size {
  width: number;
  height: number;
}

const STEP_SIZE: Size = { width: NODE_WIDTH, height: NODE_HEIGHT };

export interface PlanLayout {
  /** Each step's top-left corner. */
  positions: Map<string, Point>;
  /** Per edge (`dependency->step`), the centre of each column it crosses, on the free lane dagre kept for it. */
  lanes: Map<string, Point[]>;
}

/**
 * Left-to-right positions for a plan's steps and lanes for its long edges; computed once per plan, not per event.
 * A step in `sizes` (an expanded sub-agent's group) takes that room instead of a node's.
 */
export function layoutPlan(steps: readonly Pick<PlanStep, 'id' | 'dependencies'>[], sizes: ReadonlyMap<string, Size> = new Map()): PlanLayout {
  const sizeOf = (id: string) => sizes.get(id) ?? STEP_SIZE;
  const graph = new dagre.graphlib.Graph();
  graph.setGraph({ rankdir: 'LR', nodesep: 24, ranksep: 64 });
  graph.setDefaultEdgeLabel(() => ({}));
  graph.setNode(ORIGIN, { width: 0, height: 0 });
  for (const step of steps) graph.setNode(step.id, { ...sizeOf(step.id) });
  // Pulling a root one column left lengthens only its own out-edges; a weight above any out-degree makes that always worth it.
  const rootWeight = steps.length + 1;
  for (const step of steps) {
    const dependencies = step.dependencies.filter((dependency) => dependency !== step.id && graph.hasNode(dependency));
    if (dependencies.length === 0) graph.setEdge(ORIGIN, step.id, { weight: rootWeight });
    for (const dependency of dependencies) graph.setEdge(dependency, step.id);
  }
  dagre.layout(graph);
  const positions = new Map(steps.map((step) => {
    const node = graph.node(step.id);
    const { width, height } = sizeOf(step.id);
    return [step.id, { x: node.x - width / 2, y: node.y - height / 2 }];
  }));
  const columns = new Set(steps.map((step) => Math.round(graph.node(step.id).x)));
  const lanes = new Map<string, Point[]>();
  for (const edge of graph.edges()) {
    if (edge.v === ORIGIN) continue;
    const points: Point[] = graph.edge(edge).points ?? [];
    const crossed = points.slice(1, -1).filter((point) => columns.has(Math.round(point.x)));
    lanes.set(`${edge.v}->${edge.w}`, crossed.map((point) => ({ x: point.x, y: point.y })));
  }
  return { positions, lanes };
}

/** The rectangle the laid-out nodes cover, in flow coordinates. */
export function boundsOf(positions: ReadonlyMap<string, Point>, sizes: ReadonlyMap<string, Size> = new Map()): Rect {
  const all = [...positions].map(([id, position]) => ({ ...position, ...(sizes.get(id) ?? STEP_SIZE) }));
  if (all.length === 0) return { x: 0, y: 0, ...STEP_SIZE };
  const x = Math.min(...all.map((box) => box.x));
  const y = Math.min(...all.map((box) => box.y));
  return {
    x,
    y,
    width: Math.max(...all.map((box) => box.x + box.width)) - x,
    height: Math.max(...all.map((box) => box.y + box.height)) - y,
  };
}

/**
 * Room around a group's steps, and above them for the sub-agent step's own title and its Collapse line: one line each,
 * at the largest size node text takes (zoomed out to the minimum, 11 px / 0.4 = 27.5 flow units, the title 1.1 times that).
 */
export const GROUP_PADDING = 16;
export const GROUP_HEADER = 92;

/** How large a group is that holds steps laid out within `bounds`. */
export function groupSize(bounds: Rect): Size {
  return { width: bounds.width + 2 * GROUP_PADDING, height: bounds.height + GROUP_HEADER + GROUP_PADDING };
}

/** Where a step of a group goes, relative to the group's top-left corner. */
export function inGroup(position: Point, bounds: Rect): Point {
  return { x: position.x - bounds.x + GROUP_PADDING, y: position.y - bounds.y + GROUP_HEADER };
}
