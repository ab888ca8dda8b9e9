/** Someone waiting for a slot: handed it by a release, or gone when its signal aborts. */
interface Waiter {
  admit(): void;
}

/**
 * At most `limit` holders at once (null: no bound), admitted in the order they asked. A waiter whose
 * signal aborts leaves the queue at once and never takes a slot; a release hands its slot straight
 * to the next waiter.
 */
export class Slots {
  private held = 0;
  private readonly queue: Waiter[] = [];

  constructor(readonly limit: number | null) {}

  /** A slot, and the function that gives it back (calling it twice gives it back once). */
  async acquire(signal: AbortSignal): Promise<() => void> {
    signal.throwIfAborted();
    if (this.limit === null || this.held < this.limit) this.held++;
    else await this.wait(signal);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.release();
    };
  }

  /** `work` while holding a slot; the slot is given back however it ends. */
  async run<T>(signal: AbortSignal, work: () => Promise<T>): Promise<T> {
    const release = await this.acquire(signal);
    try {
      return await work();
    } finally {
      release();
    }
  }

  private wait(signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        admit: () => {
          signal.removeEventListener('abort', leave);
          resolve();
        },
      };
      const leave = () => {
        this.queue.splice(this.queue.indexOf(waiter), 1);
        reject(signal.reason);
      };
      signal.addEventListener('abort', leave, { once: true });
      this.queue.push(waiter);
    });
  }

  private release(): void {
    const next = this.queue.shift();
    if (next) next.admit();
    else this.held--;
  }
}
