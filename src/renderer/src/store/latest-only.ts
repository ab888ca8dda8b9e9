/**
 * Wraps a fetch whose answers replace state: when calls overlap, only the answer to the latest call
 * is applied, so a slow, older answer never overwrites a newer one.
 */
export function latestOnly<A extends unknown[], T>(fetch: (...args: A) => Promise<T>, apply: (value: T, ...args: A) => void): (...args: A) => Promise<void> {
  let latest = 0;
  return async (...args) => {
    const call = ++latest;
    const value = await fetch(...args);
    if (call === latest) apply(value, ...args);
  };
}
