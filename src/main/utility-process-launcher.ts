import { parseExecutorMessage, type ExecutorMessage, type HostMessage } from '../shared/executor-protocol';
import type { ProcessLauncher, ToolProcess } from '../core/process/process-launcher';
import { utilityChannel, type UtilityFork } from './utility-channel';

/** Tool processes in the app: Electron utility processes behind the core's launcher interface. */
export function createUtilityProcessLauncher(fork: UtilityFork): ProcessLauncher {
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
        ...utilityChannel<ExecutorMessage, HostMessage>(child, parseExecutorMessage),
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
