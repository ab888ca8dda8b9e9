import { describe, expect, it } from 'vitest';
import { Slots } from '../../../src/core/agent/slots';

describe('slots', () => {
  it('lets at most `size` hold at once; a waiter stopped meanwhile does not swallow the next slot', async () => {
    const slots = new Slots(1);
    const order: string[] = [];
    const first = await slots.acquire(new AbortController().signal);
    const stopped = new AbortController();
    const abandoned = slots.acquire(stopped.signal).catch(() => order.push('abandoned'));
    const second = slots.acquire(new AbortController().signal).then((release) => (order.push('second'), release));
    stopped.abort(new Error('stopped'));
    await abandoned;
    order.push('first released');
    first();
    (await second)();
    expect(order).toEqual(['abandoned', 'first released', 'second']);
  });
});
