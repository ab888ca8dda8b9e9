import { describe, expect, it } from 'vitest';
import { boundsOf, layoutPlan, NODE_HEIGHT, NODE_TEXT_PX, NODE_WIDTH } from '../../../../src/renderer/src/features/dag/dag-layout';
import { fitViewport, MIN_ZOOM, READABLE_TEXT_PX } from '../../../../src/renderer/src/features/dag/dag-viewport';

const step = (id: string, dependencies: string[] = []) => ({ id, dependencies });

describe('the plan layout', () => {
  it('puts every root in the first column, even one that only feeds a deep step', () => {
    const positions = layoutPlan([step('a'), step('b', ['a']), step('c', ['b']), step('d', ['c', 'late']), step('late'), step('side', ['a'])]);
    const xs = [...positions.values()].map((position) => position.x);
    expect(positions.get('late')?.x).toBe(Math.min(...xs));
    expect(positions.get('a')?.x).toBe(Math.min(...xs));
    expect(positions.get('d')?.x).toBeGreaterThan(positions.get('c')?.x ?? Infinity);
  });

  it('keeps nodes apart', () => {
    const positions = [...layoutPlan(Array.from({ length: 12 }, (_, index) => step(`s${index}`, index < 3 ? [] : [`s${index % 3}`]))).values()];
    for (const [index, one] of positions.entries())
      for (const other of positions.slice(index + 1)) expect(Math.abs(one.x - other.x) >= NODE_WIDTH || Math.abs(one.y - other.y) >= NODE_HEIGHT).toBe(true);
  });
});

describe('the viewport', () => {
  it('never zooms out so far that node text renders under 11 px', () => {
    expect(MIN_ZOOM * NODE_TEXT_PX).toBeGreaterThanOrEqual(READABLE_TEXT_PX);
  });

  it('centres a graph that fits', () => {
    const fit = fitViewport({ x: 0, y: 0, width: 400, height: 200 }, 1000, 600);
    expect(fit).toMatchObject({ fits: true });
    expect((fit?.x ?? 0) * 2 + 400 * (fit?.zoom ?? 0)).toBeCloseTo(1000);
  });

  it('clamps a graph too large to read at fit to the minimum zoom, with the first column and the top in view', () => {
    const bounds = boundsOf(layoutPlan(Array.from({ length: 12 }, (_, index) => step(`s${index}`, index === 0 ? [] : [`s${index - 1}`]))));
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
