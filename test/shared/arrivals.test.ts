import { describe, expect, it } from 'vitest';
import { arrivalTracker } from '../../src/shared/arrivals';

const item = (id: string) => ({ id });
const answer = (...ids: string[]) => ids.map(item);

describe('which items of a polled list just arrived', () => {
  it('none at the first answer: it is the baseline', () => {
    const arrivals = arrivalTracker((entry: { id: string }) => entry.id);
    expect(arrivals(answer('a', 'b'))).toEqual([]);
  });

  it('afterwards, each item whose id was in no answer before, in the order of the answer', () => {
    const arrivals = arrivalTracker((entry: { id: string }) => entry.id);
    arrivals(answer('a'));
    expect(arrivals(answer('c', 'a', 'b'))).toEqual(answer('c', 'b'));
    expect(arrivals(answer('c', 'a', 'b'))).toEqual([]);
    expect(arrivals(answer('d', 'b'))).toEqual(answer('d'));
  });

  it('not an item of the first answer that drops out and comes back, nor one of the previous answer', () => {
    const arrivals = arrivalTracker((entry: { id: string }) => entry.id);
    arrivals(answer('a'));
    expect(arrivals(answer('b'))).toEqual(answer('b'));
    expect(arrivals(answer('a', 'b'))).toEqual([]);
  });

  it('an empty first answer is a baseline too', () => {
    const arrivals = arrivalTracker((entry: { id: string }) => entry.id);
    expect(arrivals([])).toEqual([]);
    expect(arrivals(answer('a'))).toEqual(answer('a'));
  });

  it('keeps one history per tracker', () => {
    const idOf = (entry: { id: string }) => entry.id;
    const first = arrivalTracker(idOf);
    const second = arrivalTracker(idOf);
    first(answer('a'));
    expect(first(answer('a', 'b'))).toEqual(answer('b'));
    expect(second(answer('a', 'b'))).toEqual([]);
  });
});
