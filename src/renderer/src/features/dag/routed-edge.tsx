import { BaseEdge, type Edge, type EdgeProps } from '@xyflow/react';
import { NODE_WIDTH, type Point } from './dag-layout';

export type RoutedEdgeType = Edge<{ lanes: Point[] }, 'routed'>;

/**
 * An SVG path from `source` to `target` that runs straight through each column it crosses, on the lane the layout
 * kept free there, and bends only in the gaps between columns: a long edge never passes behind a node.
 */
export function routePath(source: Point, target: Point, lanes: readonly Point[]): string {
  const points = [source, ...lanes.flatMap((lane) => [{ x: lane.x - NODE_WIDTH / 2, y: lane.y }, { x: lane.x + NODE_WIDTH / 2, y: lane.y }]), target];
  return points.reduce((path, point, index) => {
    if (index === 0) return `M ${point.x} ${point.y}`;
    const previous = points[index - 1] as Point;
    if (previous.y === point.y) return `${path} L ${point.x} ${point.y}`;
    const middle = (previous.x + point.x) / 2;
    return `${path} C ${middle} ${previous.y} ${middle} ${point.y} ${point.x} ${point.y}`;
  }, '');
}

export function RoutedEdge({ sourceX, sourceY, targetX, targetY, data, markerEnd, style }: EdgeProps<RoutedEdgeType>) {
  return <BaseEdge path={routePath({ x: sourceX, y: sourceY }, { x: targetX, y: targetY }, data?.lanes ?? [])} markerEnd={markerEnd} style={style} />;
}
