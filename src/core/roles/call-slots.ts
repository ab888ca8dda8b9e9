import { raceAbort } from '../../shared/abort';

/** At most `limit` calls at once (null: no bound); a caller waiting for a slot is released by its signal. */
export class CallSlots {
  private active = 0;
  private waiters: (() => void)[] = [];

  constructor(readonly limit: number | null) {}

  async run<T>(signal: AbortSignal, work: () => Promise<T>): Promise<T> {
    await this.acquire(signal);
    try {
      return await work();
    } finally {
      this.active--;
      // Every waiter tries again: one that was aborted meanwhile must not swallow the freed slot.
      for (const wake of this.waiters.splice(0)) wake();
    }
  }

  private async acquire(signal: AbortSignal): Promise<void> {
    // Each pass waits for a release, so the loop ends when a slot frees or the signal aborts.
    while (this.limit !== null && this.active >= this.limit) await raceAbort(new Promise<void>((resolve) => this.waiters.push(resolve)), signal);
    this.active++;
  }
}
