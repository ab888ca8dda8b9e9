/** Collects events and hands them over at most once per animation frame, so a burst costs one store update. */
export function createEventBatcher<T>(deliver: (batch: T[]) => void, schedule: (flush: () => void) => void = requestAnimationFrame): (event: T) => void {
  let queue: T[] = [];
  let scheduled = false;
  return (event) => {
    queue.push(event);
    if (scheduled) return;
    scheduled = true;
    schedule(() => {
      scheduled = false;
      const batch = queue;
      queue = [];
      deliver(batch);
    });
  };
}
