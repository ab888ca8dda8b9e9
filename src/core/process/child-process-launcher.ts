import { fork } from 'node:child_process';
import { parseExecutorMessage } from '../../shared/executor-protocol';
import type { ProcessLauncher, ToolProcess } from './process-launcher';

function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

/** child_process.fork, each child the leader of its own process group. */
export const childProcessLauncher: ProcessLauncher = {
  launch(entry, options = {}): ToolProcess {
    const child = fork(entry, options.args ?? [], {
      cwd: options.cwd,
      env: options.env ?? {},
      execArgv: options.execArgv ?? [],
      detached: true,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'json',
    });
    // A pipe to a dying child fails (EPIPE); the child is then finished off, and its exit settles its calls.
    const finishOff = () => signalGroup(child.pid, 'SIGKILL');
    child.on('error', finishOff);
    return {
      pid: child.pid,
      send(message) {
        if (!child.connected) return;
        child.send(message, (error) => {
          if (error) finishOff();
        });
      },
      onMessage(listener) {
        const handle = (raw: unknown) => listener(parseExecutorMessage(raw));
        child.on('message', handle);
        return () => child.off('message', handle);
      },
      onExit(listener) {
        const handle = (code: number | null) => listener(code);
        child.on('exit', handle);
        return () => child.off('exit', handle);
      },
      kill(signal = 'SIGTERM') {
        signalGroup(child.pid, signal);
      },
    };
  },
};
