import type { Confinement } from '../../shared/executor-protocol';

export interface SeatbeltCall {
  workspace: string;
  /** A private temporary folder of this call. */
  tmp: string;
  confinement: Confinement;
}

/** The system a command may read on macOS. */
const SYSTEM_PATHS = ['/usr', '/bin', '/sbin', '/System', '/Library/Apple', '/private/etc', '/private/var/db/dyld', '/System/Volumes/Preboot/Cryptexes', '/opt/homebrew', '/dev'];

/**
 * A Seatbelt profile for `sandbox-exec -p PROFILE -D NAME=VALUE…`: nothing by default; the system
 * read-only; the workspace and the call's temp folder read-write; the hidden folders denied even
 * inside those (later rules win); the network only when allowed. Paths are passed as parameters,
 * so no path is ever spliced into the profile's text.
 */
export function seatbeltProfile(call: SeatbeltCall): { profile: string; params: Record<string, string> } {
  const params: Record<string, string> = { WORKSPACE: call.workspace, TMP: call.tmp };
  SYSTEM_PATHS.forEach((path, index) => (params[`SYSTEM_${index}`] = path));
  call.confinement.hidden.forEach((path, index) => (params[`HIDDEN_${index}`] = path));
  const subpaths = (prefix: string) =>
    Object.keys(params)
      .filter((name) => name.startsWith(prefix))
      .map((name) => `(subpath (param "${name}"))`)
      .join(' ');
  const lines = [
    '(version 1)',
    '(deny default)',
    '(allow process-exec process-fork)',
    '(allow signal (target same-sandbox))',
    '(allow sysctl-read)',
    '(allow mach-lookup)',
    '(allow file-read-metadata)',
    '(allow file-read* (literal "/"))',
    `(allow file-read* ${subpaths('SYSTEM_')})`,
    '(allow file-write* (literal "/dev/null") (literal "/dev/tty"))',
    '(allow file-read* file-write* (subpath (param "WORKSPACE")) (subpath (param "TMP")))',
  ];
  if (call.confinement.hidden.length > 0) lines.push(`(deny file-read* file-write* ${subpaths('HIDDEN_')})`);
  if (call.confinement.allowNetwork) lines.push('(allow network*)', '(allow system-socket)');
  return { profile: lines.join('\n'), params };
}

/** sandbox-exec's arguments: the profile, its parameters, then the command. */
export function seatbeltArguments(call: SeatbeltCall, command: string): string[] {
  const { profile, params } = seatbeltProfile(call);
  return ['-p', profile, ...Object.entries(params).flatMap(([name, value]) => ['-D', `${name}=${value}`]), '/bin/sh', '-c', command];
}
