import { chmodSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { ArchonError } from '../shared/errors';

/** The platform's per-user application-data folder for Archon (the same one Electron's `userData` uses). */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  if (platform === 'win32') return join(env.APPDATA ?? join(homedir(), 'AppData', 'Roaming'), 'Archon');
  if (platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'Archon');
  return join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'Archon');
}

/** `--data-dir`, else `ARCHON_DATA_DIR`, else the platform default; created when missing, and private to the user (0700). */
export function resolveDataDir(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const dir = resolve(flag ?? env.ARCHON_DATA_DIR ?? defaultDataDir(env));
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
  } catch (error) {
    throw new ArchonError('CONFIG_INVALID', `Cannot create the data folder ${dir}: ${(error as Error).message}. Pass --data-dir with a writable folder.`, { cause: error });
  }
  return dir;
}
