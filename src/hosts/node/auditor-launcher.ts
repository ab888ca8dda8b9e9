import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { AuditorChannel } from '../../core/audit/auditor-client';
import { forkedChannel } from '../../core/process/process-channel';
import type { ToAuditor } from '../../shared/auditor-protocol';

/** The built auditor beside this CLI bundle (out/node/auditor.js). */
export const AUDITOR_ENTRY = fileURLToPath(new URL('./auditor.js', import.meta.url));

/**
 * The auditor as a child process of the CLI. It leads its own process group, so the terminal's
 * Ctrl-C reaches only the host, which drains it; if the host dies, the closed channel tells it.
 */
export function forkAuditor(dataDir: string, entry = AUDITOR_ENTRY): AuditorChannel & { readonly pid: number | undefined } {
  const child = fork(entry, [dataDir], { detached: true, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'json' });
  // A channel closing under a send (the auditor just exited) is reported by onExit, not as a crash.
  return { pid: child.pid, ...forkedChannel<unknown, ToAuditor>(child, (raw) => raw) };
}
