/**
 * Which items of a polled list just arrived, given its successive answers: none at the first answer
 * (the baseline), then those whose id is in neither the first answer nor the previous one, so an item
 * that drops out of the list and comes back is not announced again.
 */
export function arrivalTracker<T>(idOf: (item: T) => string): (answer: readonly T[]) => T[] {
  let first: ReadonlySet<string> | null = null;
  let previous: ReadonlySet<string> = new Set();
  return (answer) => {
    const ids = new Set(answer.map(idOf));
    const baseline = first;
    const arrived = baseline === null ? [] : answer.filter((item) => !baseline.has(idOf(item)) && !previous.has(idOf(item)));
    first ??= ids;
    previous = ids;
    return arrived;
  };
}
