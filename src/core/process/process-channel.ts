import type { ChildProcess } from 'node:child_process';

/** Messages to and from a process of ours, whichever way it was started. */
export interface ProcessChannel<In, Out> {
  send(message: Out): void;
  onMessage(listener: (message: In) => void): () => void;
  onExit(listener: (code: number | null) => void): () => void;
}

/**
 * The channel of a forked child. A pipe that breaks under a send (the child is dying) is handed to
 * `onBroken` rather than crashing the parent; the child's exit then says what happened.
 */
export function forkedChannel<In, Out>(child: ChildProcess, parse: (raw: unknown) => In, onBroken: () => void = () => undefined): ProcessChannel<In, Out> {
  child.on('error', onBroken);
  return {
    send(message) {
      if (!child.connected) return;
      child.send(message as object, (error) => {
        if (error) onBroken();
      });
    },
    onMessage(listener) {
      const handle = (raw: unknown) => listener(parse(raw));
      child.on('message', handle);
      return () => child.off('message', handle);
    },
    onExit(listener) {
      const handle = (code: number | null) => listener(code);
      child.on('exit', handle);
      return () => child.off('exit', handle);
    },
  };
}
