import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Confinement } from '../../shared/executor-protocol';
import { isInside } from '../workspace-paths';
import { bubblewrapArguments } from './bubblewrap';
import { seatbeltArguments } from './seatbelt';

/** How one command is started: under which sandbox, or refused with what to do. */
export type CommandLaunch =
  | { kind: 'bubblewrap' | 'seatbelt' | 'unconfined'; file: string; args: string[]; env: NodeJS.ProcessEnv; cwd: string; infoFd?: number; tmp?: string }
  | { kind: 'refused'; reason: string };

const SYSTEM_PATH = '/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin';
const INFO_FD = 3;

const INSTALL_HINT =
  'Install bubblewrap (Debian/Ubuntu: sudo apt install bubblewrap; Fedora: sudo dnf install bubblewrap; Arch: sudo pacman -S bubblewrap), ' +
  'or set sandbox to "off" in Settings to run commands unconfined, each one after your approval.';

/** The only variables a command sees: nothing secret from Archon's own environment. */
function minimalEnvironment(workspace: string, path: string, tmp: string): Record<string, string> {
  return { PATH: path, HOME: workspace, LANG: 'C.UTF-8', TERM: 'dumb', TMPDIR: tmp };
}

let bubblewrap: { ok: true } | { ok: false; reason: string } | undefined;

/** Whether bwrap runs here (installed, and user namespaces allowed); checked once per tool process. */
function bubblewrapWorks(): { ok: true } | { ok: false; reason: string } {
  bubblewrap ??= (() => {
    const probe = spawnSync('bwrap', ['--ro-bind', '/', '/', '--unshare-all', '--die-with-parent', '/bin/sh', '-c', ':'], { encoding: 'utf8', timeout: 10_000 });
    if (probe.error) return { ok: false, reason: `run_command is refused: bubblewrap, its OS sandbox, is not available (${(probe.error as NodeJS.ErrnoException).code ?? probe.error.message}). ${INSTALL_HINT}` };
    if (probe.status !== 0) return { ok: false, reason: `run_command is refused: bubblewrap cannot create its sandbox here (${probe.stderr.trim() || `exit ${probe.status}`}); unprivileged user namespaces may be disabled. ${INSTALL_HINT}` };
    return { ok: true };
  })();
  return bubblewrap;
}

/** Picks the platform's sandbox for a command, or refuses it when there is none and the operator has not turned the sandbox off. */
export function commandLaunch(command: string, workspace: string, confinement: Confinement): CommandLaunch {
  if (confinement.mode === 'off') {
    return { kind: 'unconfined', file: '/bin/sh', args: ['-c', command], env: minimalEnvironment(workspace, process.env.PATH ?? SYSTEM_PATH, tmpdir()), cwd: workspace };
  }
  if (process.platform === 'linux') {
    const available = bubblewrapWorks();
    if (!available.ok) return { kind: 'refused', reason: available.reason };
    const hiddenInWorkspace = confinement.hidden.filter((path) => path !== workspace && isInside(workspace, path) && existsSync(path));
    const environment = minimalEnvironment(workspace, SYSTEM_PATH, '/tmp');
    return { kind: 'bubblewrap', file: 'bwrap', args: bubblewrapArguments({ workspace, confinement, hiddenInWorkspace, environment, infoFd: INFO_FD, command }), env: { PATH: process.env.PATH ?? SYSTEM_PATH }, cwd: workspace, infoFd: INFO_FD };
  }
  if (process.platform === 'darwin') {
    // Seatbelt matches real paths (/private/var/…); the native realpath resolves the folder in one call the permission model allows.
    const tmp = realpathSync.native(mkdtempSync(join(tmpdir(), 'cmd-')));
    return { kind: 'seatbelt', file: '/usr/bin/sandbox-exec', args: seatbeltArguments({ workspace, tmp, confinement }, command), env: minimalEnvironment(workspace, process.env.PATH ?? SYSTEM_PATH, tmp), cwd: workspace, tmp };
  }
  return { kind: 'refused', reason: `run_command is refused: Archon has no OS sandbox for ${process.platform}. Set sandbox to "off" in Settings to run commands unconfined, each one after your approval.` };
}
