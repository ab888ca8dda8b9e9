/**
 * A child process's channel to the Archon host that started it: Electron's `parentPort` in a utility
 * process, Node's IPC channel in a forked child. The auditor and the built-in engine speak through it.
 */

interface ParentPort {
  postMessage(message: unknown): void;
  on(event: 'message', listener: (event: { data: unknown }) => void): void;
}

export interface ParentChannel<Out> {
  /** Resolves once the message is handed over, so the process may exit after it. */
  send(message: Out): Promise<void>;
  onMessage(listener: (raw: unknown) => void): void;
  /** The host is gone (a forked child's channel closed); Electron ends a utility process with the app. */
  onGone(listener: () => void): void;
}

/** The channel; a process started without one (by hand) sends into the void. */
export function parentChannel<Out>(): ParentChannel<Out> {
  const port = (process as { parentPort?: ParentPort }).parentPort;
  if (port) {
    return {
      send: (message) => {
        port.postMessage(message);
        return new Promise((done) => setImmediate(done));
      },
      onMessage: (listener) => port.on('message', (event) => listener(event.data)),
      onGone: () => undefined,
    };
  }
  return {
    send: (message) =>
      new Promise((done) => {
        if (!process.connected || !process.send) return done();
        process.send(message, () => done());
      }),
    onMessage: (listener) => process.on('message', listener),
    onGone: (listener) => process.once('disconnect', listener),
  };
}
