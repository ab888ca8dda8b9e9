import type { Confinement } from '../../shared/executor-protocol';

/** The system a command may read: the program folders, whole, read-only. */
const SYSTEM_FOLDERS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/opt'];

/** The parts of /etc programs need; the rest (shadow files, SSH host keys, private TLS keys, …) is not there. */
const ETC_ENTRIES = [
  'alternatives', 'bash.bashrc', 'ca-certificates', 'ca-certificates.conf', 'debian_version', 'gai.conf', 'group', 'host.conf', 'hostname', 'hosts',
  'inputrc', 'ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'localtime', 'mime.types', 'nsswitch.conf', 'os-release', 'passwd', 'profile',
  'protocols', 'resolv.conf', 'services', 'ssl/certs', 'ssl/openssl.cnf', 'timezone',
];

export interface BubblewrapCall {
  workspace: string;
  confinement: Confinement;
  /** Hidden folders that lie inside the workspace and exist: each gets an empty tmpfs over it. */
  hiddenInWorkspace: readonly string[];
  environment: Readonly<Record<string, string>>;
  /** The descriptor bwrap writes its JSON status to (the sandbox's init pid). */
  infoFd: number;
  command: string;
}

/**
 * bwrap's arguments for one command: a new root holding only the system (read-only), the workspace
 * (read-write), a fresh /proc of its own PID namespace, a minimal /dev and a private /tmp; every
 * namespace unshared (the network too, unless allowed); the sandbox dies with its parent.
 */
export function bubblewrapArguments(call: BubblewrapCall): string[] {
  const args = ['--die-with-parent', '--new-session', '--unshare-all', ...(call.confinement.allowNetwork ? ['--share-net'] : []), '--info-fd', String(call.infoFd)];
  for (const folder of SYSTEM_FOLDERS) args.push('--ro-bind-try', folder, folder);
  for (const entry of ETC_ENTRIES) args.push('--ro-bind-try', `/etc/${entry}`, `/etc/${entry}`);
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--dir', '/var/tmp');
  args.push('--bind', call.workspace, call.workspace);
  for (const hidden of call.hiddenInWorkspace) args.push('--tmpfs', hidden);
  args.push('--chdir', call.workspace, '--clearenv');
  for (const [name, value] of Object.entries(call.environment)) args.push('--setenv', name, value);
  args.push('/bin/sh', '-c', call.command);
  return args;
}
