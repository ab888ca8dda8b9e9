import { describe, expect, it } from 'vitest';
import { giveBackHeap } from '../../src/core/heap';

/** About 80 MB of arrays that are garbage once this returns; the heap's size while they were alive. */
function heapGrownByGarbage(): number {
  const garbage = Array.from({ length: 40 }, (_, index) => new Array<number>(250_000).fill(index + 0.5));
  return garbage.length > 0 ? process.memoryUsage().heapTotal : 0;
}

describe('giveBackHeap', () => {
  it('hands back the heap that garbage grew, without putting `gc` on the global', () => {
    const grown = heapGrownByGarbage();
    giveBackHeap();
    expect(process.memoryUsage().heapTotal).toBeLessThan(grown - 40 * 1024 * 1024);
    expect('gc' in globalThis).toBe(false);
  });
});
