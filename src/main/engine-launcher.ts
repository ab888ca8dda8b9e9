import type { EngineLauncher, EngineProcess } from '../core/model/builtin-engine';
import { utilityChannel, type UtilityFork } from './utility-channel';

/** The built-in engine in the app: a utility process of its own, started by path, with the app's environment and its token. */
export function engineUtilityLauncher(fork: UtilityFork, entry: string): EngineLauncher {
  return (args, env): EngineProcess => {
    const child = fork(entry, args, { serviceName: 'Archon built-in engine', stdio: 'inherit', env: { ...process.env, ...env } });
    const channel = utilityChannel<unknown, never>(child, (raw) => raw);
    return {
      get pid() {
        return child.pid;
      },
      onMessage: channel.onMessage,
      onExit: channel.onExit,
      // utilityProcess.kill() is SIGTERM on POSIX; the last resort goes to the pid, which may have just exited.
      kill: (signal) => {
        if (signal !== 'SIGKILL' || !child.pid) return void child.kill();
        try {
          process.kill(child.pid, 'SIGKILL');
        } catch {
          // ESRCH: already gone.
        }
      },
    };
  };
}
