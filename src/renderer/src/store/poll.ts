/**
 * Runs `task` now and again `everyMs` after each run ends, until the returned function is called:
 * for what another process changes, where asking again is the only way to learn of it.
 */
export function pollEvery(everyMs: number, task: () => Promise<void>): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const poll = async () => {
    await task();
    if (!stopped) timer = setTimeout(() => void poll(), everyMs);
  };
  void poll();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
