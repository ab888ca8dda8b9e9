import type { UtilityProcess } from 'electron';
import { parseExecutorMessage } from '../shared/executor-protocol';
import type { ProcessLauncher, ToolProcess } from '../core/process/process-launcher';

type Fork = (modulePath: string, args?: string[], options?: Electron.ForkOptions) => UtilityProcess;

/** Tool processes in the app: Electron utility processes behind the core's launcher interface. */
export function createUtilityProcessLauncher(fork: Fork): ProcessLauncher {
  return {
    launch(entry, options = {}): ToolProcess {
      const child = fork(entry, options.args ?? [], {
        serviceName: 'Archon tool executor',
        stdio: 'inherit',
        cwd: options.cwd,
        env: options.env ?? {},
        execArgv: options.execArgv ?? [],
      });
      return {
        get pid() {
          return child.pid;
        },
        send: (message) => child.postMessage(message),
        onMessage(listener) {
          const handle = (raw: unknown) => listener(parseExecutorMessage(raw));
          child.on('message', handle);
          return () => child.off('message', handle);
        },
        onExit(listener) {
          const handle = (code: number) => listener(code);
          child.on('exit', handle);
          return () => child.off('exit', handle);
        },
        kill(signal = 'SIGTERM') {
          if (child.pid === undefined) return;
          try {
            process.kill(-child.pid, signal);
          } catch {
            child.kill();
          }
        },
      };
    },
  };
}
