/**
 * Ends a model attempt that stalls: no first chunk within the first-byte timeout, or a gap between
 * chunks longer than the idle timeout. Its signal aborts the attempt; `stall` says why.
 */
export class StallWatchdog {
  private readonly controller = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private chunkCount = 0;
  stall: string | null = null;

  constructor(
    private readonly firstByteMs: number,
    private readonly idleMs: number,
  ) {
    this.arm(firstByteMs, `no answer within ${Math.round(firstByteMs / 1000)} s of sending the request (first-byte timeout)`);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Chunks seen so far: a stalled attempt that streamed some was partly generated. */
  get chunks(): number {
    return this.chunkCount;
  }

  /** Wraps a stream so every chunk re-arms the idle timer. */
  async *watch<T>(stream: AsyncIterable<T>): AsyncIterable<T> {
    for await (const chunk of stream) {
      this.chunkCount++;
      this.arm(this.idleMs, `the stream went silent for ${Math.round(this.idleMs / 1000)} s (idle timeout)`);
      yield chunk;
    }
  }

  dispose(): void {
    clearTimeout(this.timer);
  }

  private arm(ms: number, why: string): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.stall = why;
      this.controller.abort(new Error(why));
    }, ms);
  }
}
