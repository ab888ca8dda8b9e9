/** The system a sandboxed program may read: the program folders, whole, read-only. */
const SYSTEM_FOLDERS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/opt'];

/** The parts of /etc programs need; the rest (shadow files, SSH host keys, private TLS keys, …) is not there. */
const ETC_ENTRIES = [
  'alternatives', 'bash.bashrc', 'ca-certificates', 'ca-certificates.conf', 'debian_version', 'gai.conf', 'group', 'host.conf', 'hostname', 'hosts',
  'inputrc', 'ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'localtime', 'mime.types', 'nsswitch.conf', 'os-release', 'passwd', 'profile',
  'protocols', 'resolv.conf', 'services', 'ssl/certs', 'ssl/openssl.cnf', 'timezone',
];

export interface BubblewrapRoot {
  workspace: string;
  allowNetwork: boolean;
  /** Hidden folders that lie inside the workspace and exist: each gets an empty tmpfs over it. */
  hiddenInWorkspace: readonly string[];
  /** Folders beyond the system the program may read (a server's own files). */
  readable?: readonly string[];
  /** The descriptor bwrap writes its JSON status to (the sandbox's init pid). */
  infoFd?: number;
}

/**
 * bwrap's arguments up to the program: a new root holding only the system (read-only), the
 * workspace (read-write, the working folder), a fresh /proc of its own PID namespace, a minimal
 * /dev and a private /tmp; every namespace unshared (the network too, unless allowed); the sandbox
 * dies with its parent; every capability is dropped (bwrap always sets no-new-privileges), so a
 * program started by root cannot unmount what hides a folder. Shared by commands (the executor)
 * and MCP servers (the runtime).
 */
export function bubblewrapRoot(root: BubblewrapRoot): string[] {
  const args = ['--die-with-parent', '--new-session', '--unshare-all', '--cap-drop', 'ALL', ...(root.allowNetwork ? ['--share-net'] : [])];
  if (root.infoFd !== undefined) args.push('--info-fd', String(root.infoFd));
  for (const folder of SYSTEM_FOLDERS) args.push('--ro-bind-try', folder, folder);
  for (const entry of ETC_ENTRIES) args.push('--ro-bind-try', `/etc/${entry}`, `/etc/${entry}`);
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--dir', '/var/tmp');
  for (const folder of root.readable ?? []) args.push('--ro-bind-try', folder, folder);
  args.push('--bind', root.workspace, root.workspace);
  for (const hidden of root.hiddenInWorkspace) args.push('--tmpfs', hidden);
  args.push('--chdir', root.workspace);
  return args;
}
