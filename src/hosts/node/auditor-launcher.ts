import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { AuditorProcess } from '../../core/audit/auditor-supervisor';
import { forkedChannel } from '../../core/process/process-channel';
import type { ToAuditor } from '../../shared/auditor-protocol';

/** The built auditor beside this CLI bundle (out/node/auditor.js). */
export const AUDITOR_ENTRY = fileURLToPath(new URL('./auditor.js', import.meta.url));

/**
 * The auditor as a child process of the CLI. It leads its own process group, so the terminal's
 * Ctrl-C reaches only the host, which drains it; if the host dies, the closed channel tells it.
 */
export function forkAuditor(dataDir: string, entry = AUDITOR_ENTRY): AuditorProcess {
  const child = fork(entry, [dataDir], { detached: true, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'json' });
  // A channel closing under a send (the auditor just exited) is reported by onExit, not as a crash.
  const channel = forkedChannel<unknown, ToAuditor>(child, (raw) => raw);
  return {
    pid: child.pid,
    send: channel.send,
    onMessage: channel.onMessage,
    onExit(listener) {
      const handle = (code: number | null, signal: NodeJS.Signals | null) => listener(code, signal);
      child.on('exit', handle);
      return () => child.off('exit', handle);
    },
  };
}
