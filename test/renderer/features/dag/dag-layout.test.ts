import { describe, expect, it } from 'vitest';
import { boundsOf, groupSize, inGroup, layoutPlan, NODE_HEIGHT, NODE_TEXT_PX, NODE_WIDTH } from '../../../../src/renderer/src/features/dag/dag-layout';
import { routePath } from '../../../../src/renderer/src/features/dag/routed-edge';
import { fitViewport, inView, layoutOrder, MAX_ZOOM, MIN_ZOOM, NODE_FONT_SIZE, READABLE_TEXT_PX, textZoom } from '../../../../src/renderer/src/features/dag/dag-viewport';

const step = (id: string, dependencies: string[] = []) => ({ id, dependencies });

describe('the plan layout', () => {
  it('puts every root in the first column, even one that only feeds a deep step', () => {
    const { positions } = layoutPlan([step('a'), step('b', ['a']), step('c', ['b']), step('d', ['c', 'late']), step('late'), step('side', ['a'])]);
    const xs = [...positions.values()].map((position) => position.x);
    expect(positions.get('late')?.x).toBe(Math.min(...xs));
    expect(positions.get('a')?.x).toBe(Math.min(...xs));
    expect(positions.get('d')?.x).toBeGreaterThan(positions.get('c')?.x ?? Infinity);
  });

  it('keeps nodes apart', () => {
    const positions = [...layoutPlan(Array.from({ length: 12 }, (_, index) => step(`s${index}`, index < 3 ? [] : [`s${index % 3}`]))).positions.values()];
    for (const [index, one] of positions.entries())
      for (const other of positions.slice(index + 1)) expect(Math.abs(one.x - other.x) >= NODE_WIDTH || Math.abs(one.y - other.y) >= NODE_HEIGHT).toBe(true);
  });
});

describe('a sub-agent step expanded into a group', () => {
  it('takes the room its child plan needs: the parent plan is laid out around it, and the child steps lie inside it', () => {
    const child = layoutPlan([step('c1'), step('c2'), step('c3', ['c1', 'c2'])]);
    const childBounds = boundsOf(child.positions);
    const size = groupSize(childBounds);
    const sizes = new Map([['sub', size]]);
    const parent = layoutPlan([step('a'), step('sub', ['a']), step('b', ['a']), step('z', ['sub', 'b'])], sizes);
    const box = (id: string) => ({ ...(parent.positions.get(id) ?? { x: 0, y: 0 }), ...(sizes.get(id) ?? { width: NODE_WIDTH, height: NODE_HEIGHT }) });
    const ids = ['a', 'sub', 'b', 'z'];
    for (const [index, one] of ids.map(box).entries())
      for (const other of ids.slice(index + 1).map(box)) expect(one.x + one.width <= other.x || other.x + other.width <= one.x || one.y + one.height <= other.y || other.y + other.height <= one.y).toBe(true);
    for (const position of child.positions.values()) {
      const inside = inGroup(position, childBounds);
      expect(inside.x).toBeGreaterThan(0);
      expect(inside.y).toBeGreaterThan(0);
      expect(inside.x + NODE_WIDTH).toBeLessThan(size.width);
      expect(inside.y + NODE_HEIGHT).toBeLessThan(size.height);
    }
    const bounds = boundsOf(parent.positions, sizes);
    expect(bounds.width).toBeGreaterThanOrEqual(size.width + 2 * NODE_WIDTH);
  });
});

describe('edge lanes', () => {
  it('route a long edge through each column it crosses on a lane clear of the nodes there, and bend only between columns', () => {
    const { positions, lanes } = layoutPlan([step('a'), step('b', ['a']), step('c', ['b']), step('d', ['c', 'late']), step('late'), step('b2', ['late']), step('c2', ['b2'])]);
    const crossed = lanes.get('late->d') ?? [];
    expect(crossed).toHaveLength(2);
    for (const lane of crossed) {
      const column = [...positions.values()].filter((position) => position.x + NODE_WIDTH / 2 === lane.x);
      expect(column.length).toBeGreaterThan(0);
      for (const node of column) expect(lane.y <= node.y || lane.y >= node.y + NODE_HEIGHT).toBe(true);
    }
    expect(lanes.get('a->b')).toEqual([]);
    const path = routePath({ x: 0, y: 0 }, { x: 900, y: 50 }, [{ x: 424, y: 300 }]);
    expect(path).toBe(`M 0 0 C 152 0 152 300 304 300 L 544 300 C 722 300 722 50 900 50`);
  });
});

describe('the viewport', () => {
  it('sizes node text for a zoom at or under the real one, so that it never renders under 11 px', () => {
    for (const zoom of [MIN_ZOOM, 0.4123, 0.5, 0.6789, 11 / 13, 1, MAX_ZOOM]) {
      expect(textZoom(zoom), String(zoom)).toBeLessThanOrEqual(zoom);
      expect(Math.max(NODE_TEXT_PX, READABLE_TEXT_PX / textZoom(zoom)) * zoom, String(zoom)).toBeGreaterThanOrEqual(READABLE_TEXT_PX);
    }
    expect(NODE_FONT_SIZE).toBe(`max(${NODE_TEXT_PX}px, calc(${READABLE_TEXT_PX}px / var(--dag-zoom, 1)))`);
  });

  it('tells whether a node lies wholly in the pane, and orders nodes column by column', () => {
    const viewport = { x: -100, y: 0, zoom: 0.5 };
    expect(inView({ x: 200, y: 0 }, { width: 240, height: 132 }, viewport, 400, 300)).toBe(true);
    expect(inView({ x: 0, y: 0 }, { width: 240, height: 132 }, viewport, 400, 300)).toBe(false);
    expect(inView({ x: 800, y: 0 }, { width: 240, height: 132 }, viewport, 400, 300)).toBe(false);
    expect(layoutOrder(new Map([['join', { x: 300, y: 50 }], ['b', { x: 0, y: 200 }], ['a', { x: 0, y: 0 }]]))).toEqual(['a', 'b', 'join']);
  });

  it('centres a graph that fits', () => {
    const fit = fitViewport({ x: 0, y: 0, width: 400, height: 200 }, 1000, 600);
    expect(fit).toMatchObject({ fits: true });
    expect((fit?.x ?? 0) * 2 + 400 * (fit?.zoom ?? 0)).toBeCloseTo(1000);
  });

  it('clamps a graph too large to read at fit to the minimum zoom, with the first column and the top in view', () => {
    const bounds = boundsOf(layoutPlan(Array.from({ length: 12 }, (_, index) => step(`s${index}`, index === 0 ? [] : [`s${index - 1}`]))).positions);
    const fit = fitViewport(bounds, 560, 400);
    expect(fit).toMatchObject({ zoom: MIN_ZOOM, fits: false });
    const left = bounds.x * (fit?.zoom ?? 0) + (fit?.x ?? 0);
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThan(NODE_WIDTH * MIN_ZOOM);
  });

  it('has no fit for a pane without size', () => {
    expect(fitViewport({ x: 0, y: 0, width: 10, height: 10 }, 0, 0)).toBeNull();
  });
});
