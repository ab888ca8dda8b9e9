import type { UtilityProcess } from 'electron';
import type { AuditorChannel } from '../core/audit/auditor-client';

type Fork = (modulePath: string, args?: string[], options?: Electron.ForkOptions) => UtilityProcess;

/** The auditor in the app: a utility process of its own, started by path (main never imports the auditor). */
export function forkAuditorUtility(fork: Fork, entry: string, dataDir: string): AuditorChannel {
  const child = fork(entry, [dataDir], { serviceName: 'Archon auditor', stdio: 'inherit' });
  return {
    send: (message) => child.postMessage(message),
    onMessage(listener) {
      child.on('message', listener);
      return () => child.off('message', listener);
    },
    onExit(listener) {
      const handle = (code: number) => listener(code);
      child.on('exit', handle);
      return () => child.off('exit', handle);
    },
  };
}
