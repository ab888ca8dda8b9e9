import { fork } from 'node:child_process';
import { parseExecutorMessage, type ExecutorMessage, type HostMessage } from '../../shared/executor-protocol';
import { forkedChannel } from './process-channel';
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
    const channel = forkedChannel<ExecutorMessage, HostMessage>(child, parseExecutorMessage, () => signalGroup(child.pid, 'SIGKILL'));
    return {
      pid: child.pid,
      ...channel,
      kill(signal = 'SIGTERM') {
        signalGroup(child.pid, signal);
      },
    };
  },
};
