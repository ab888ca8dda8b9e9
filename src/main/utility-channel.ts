import type { UtilityProcess } from 'electron';
import type { ProcessChannel } from '../core/process/process-channel';

/** `utilityProcess.fork`, passed in so tests can hand a fake. */
export type UtilityFork = (modulePath: string, args?: string[], options?: Electron.ForkOptions) => UtilityProcess;

/** The channel of an Electron utility process (its messages parsed by the caller's schema). */
export function utilityChannel<In, Out>(child: UtilityProcess, parse: (raw: unknown) => In): ProcessChannel<In, Out> {
  return {
    send: (message) => child.postMessage(message),
    onMessage(listener) {
      const handle = (raw: unknown) => listener(parse(raw));
      child.on('message', handle);
      return () => child.off('message', handle);
    },
    onExit(listener) {
      const handle = (code: number) => listener(code);
      child.on('exit', handle);
      return () => child.off('exit', handle);
    },
  };
}
