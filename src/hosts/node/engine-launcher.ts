import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { EngineLauncher, EngineProcess } from '../../core/model/builtin-engine';
import { forkedChannel } from '../../core/process/process-channel';

/** The built engine beside this CLI bundle (out/node/engine.js). */
export const ENGINE_ENTRY = fileURLToPath(new URL('./engine.js', import.meta.url));

/**
 * The built-in engine as a child process of the CLI, with the host's environment and its token. It
 * leads its own process group, so the terminal's Ctrl-C reaches only the host (whose emergency stop
 * ends the generations by closing their connections); when the host goes, the closed channel ends it.
 */
export function engineLauncher(entry = ENGINE_ENTRY): EngineLauncher {
  return (args, env): EngineProcess => {
    const child = fork(entry, args, { detached: true, env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'json' });
    const channel = forkedChannel<unknown, never>(child, (raw) => raw);
    return {
      pid: child.pid,
      onMessage: channel.onMessage,
      onExit: channel.onExit,
      kill: (signal = 'SIGTERM') => child.kill(signal),
    };
  };
}
