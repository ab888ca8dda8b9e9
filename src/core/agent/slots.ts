import { raceAbort } from '../../shared/abort';

/** At most `size` holders at once; a wait for a slot ends with the signal. */
export class Slots {
  private held = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly size: number) {}

  async acquire(signal: AbortSignal): Promise<() => void> {
    while (this.held >= this.size) {
      signal.throwIfAborted();
      await raceAbort(new Promise<void>((resolve) => this.waiting.push(resolve)), signal);
    }
    this.held++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held--;
      // Every waiter looks again: one that was stopped meanwhile must not swallow the wake.
      for (const wake of this.waiting.splice(0)) wake();
    };
  }
}
