import { bubblewrapRoot } from '../../shared/bubblewrap-root';
import type { Confinement } from '../../shared/executor-protocol';

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
  const args = bubblewrapRoot({ workspace: call.workspace, allowNetwork: call.confinement.allowNetwork, hiddenInWorkspace: call.hiddenInWorkspace, infoFd: call.infoFd });
  args.push('--clearenv');
  for (const [name, value] of Object.entries(call.environment)) args.push('--setenv', name, value);
  args.push('/bin/sh', '-c', call.command);
  return args;
}
