/*
 * The abort helpers every long wait uses: one way to race a promise against a signal, one way to
 * sleep that a stop ends at once.
 */

/** Settles like `promise`, or rejects with the signal's reason the moment it aborts. */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Waits `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return raceAbort(new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))), signal).finally(() => clearTimeout(timer));
}

/** One signal that aborts when any of the given ones does (undefined entries are ignored). */
export function anySignal(...signals: (AbortSignal | undefined)[]): AbortSignal {
  return AbortSignal.any(signals.filter((signal): signal is AbortSignal => signal !== undefined));
}
