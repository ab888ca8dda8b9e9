import { describe, expect, it } from 'vitest';
import { Slots } from '../../../src/core/run/slots';

const open = () => new AbortController().signal;

describe('slots', () => {
  it('admits waiters in the order they asked, at most `limit` at once', async () => {
    const slots = new Slots(2);
    const admitted: string[] = [];
    const releases = new Map<string, () => void>();
    const ask = (name: string) =>
      slots.acquire(open()).then((release) => {
        admitted.push(name);
        releases.set(name, release);
      });
    await Promise.all([ask('a'), ask('b')]);
    const waiting = ['c', 'd', 'e'].map(ask);
    await Promise.resolve();
    expect(admitted).toEqual(['a', 'b']);
    releases.get('b')?.();
    await waiting[0];
    expect(admitted).toEqual(['a', 'b', 'c']);
    releases.get('a')?.();
    releases.get('c')?.();
    await Promise.all(waiting);
    expect(admitted).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('lets a waiter whose signal aborts leave the queue without taking the next slot', async () => {
    const slots = new Slots(1);
    const first = await slots.acquire(open());
    const stopped = new AbortController();
    const abandoned = slots.acquire(stopped.signal);
    const second = slots.acquire(open());
    stopped.abort(new Error('stopped'));
    await expect(abandoned).rejects.toThrow('stopped');
    first();
    const releaseSecond = await second;
    const third = slots.acquire(open());
    releaseSecond();
    (await third)();
  });

  it('refuses at once when the signal has already aborted, even with a slot free', async () => {
    const slots = new Slots(1);
    const stopped = new AbortController();
    stopped.abort(new Error('already stopped'));
    await expect(slots.acquire(stopped.signal)).rejects.toThrow('already stopped');
    (await slots.acquire(open()))();
  });

  it('gives the slot back when the work throws, and a release called twice frees one slot', async () => {
    const slots = new Slots(1);
    await expect(slots.run(open(), () => Promise.reject(new Error('work failed')))).rejects.toThrow('work failed');
    const release = await slots.acquire(open());
    release();
    release();
    const held = await slots.acquire(open());
    const stopped = new AbortController();
    const blocked = slots.acquire(stopped.signal);
    stopped.abort(new Error('still full'));
    await expect(blocked).rejects.toThrow('still full');
    held();
  });

  it('has no bound when the limit is null', async () => {
    const slots = new Slots(null);
    const releases = await Promise.all(Array.from({ length: 50 }, () => slots.acquire(open())));
    for (const release of releases) release();
  });
});
