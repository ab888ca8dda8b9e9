/** `task` with a signal that Ctrl-C (SIGINT) aborts, with `reason`: the command stops waiting, and the listener goes when it ends. */
export async function untilInterrupted<T>(task: (signal: AbortSignal) => Promise<T>, reason?: unknown): Promise<T> {
  const interrupted = new AbortController();
  const abort = () => interrupted.abort(reason);
  process.once('SIGINT', abort);
  try {
    return await task(interrupted.signal);
  } finally {
    process.off('SIGINT', abort);
  }
}
