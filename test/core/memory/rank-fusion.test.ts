import { describe, expect, it } from 'vitest';
import { fuseRankings, RECENCY_WEIGHT, RRF_K } from '../../../src/core/memory/rank-fusion';

describe('reciprocal rank fusion', () => {
  it('adds 1/(k + rank) from each list: an item both lists hold outranks one that tops a single list', () => {
    const fused = fuseRankings(
      [
        { name: 'vector', ids: ['a', 'b'] },
        { name: 'lexical', ids: ['c', 'b'] },
      ],
      { name: 'recent', ids: [] },
    );
    expect(fused.map((entry) => entry.id)).toEqual(['b', 'a', 'c']);
    expect(fused[0]).toEqual({ id: 'b', score: 2 / (RRF_K + 2), matchedBy: ['vector', 'lexical'] });
  });

  it('lets recency order a tie but not outrank a better rank', () => {
    const tie = fuseRankings([{ name: 'lexical', ids: ['old'] }, { name: 'vector', ids: ['new'] }], { name: 'recent', ids: ['new', 'old'] });
    expect(tie.map((entry) => entry.id)).toEqual(['new', 'old']);
    const ranked = fuseRankings([{ name: 'lexical', ids: ['best', 'newer'] }], { name: 'recent', ids: ['newer', 'best'] });
    expect(ranked.map((entry) => entry.id)).toEqual(['best', 'newer']);
    expect(ranked[1]?.matchedBy).toEqual(['lexical']);
  });

  it('falls back to the recency list alone when no search found anything', () => {
    const fused = fuseRankings([], { name: 'recent', ids: ['x', 'y'] });
    expect(fused).toEqual([
      { id: 'x', score: RECENCY_WEIGHT / (RRF_K + 1), matchedBy: ['recent'] },
      { id: 'y', score: RECENCY_WEIGHT / (RRF_K + 2), matchedBy: ['recent'] },
    ]);
  });
});
