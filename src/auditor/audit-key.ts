import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * The auditor's HMAC key and the log's signed head live outside the data dir, so whoever can write
 * the data dir (an agent's tool, a stray script) cannot rewrite the log and re-sign it. The CLI and
 * the headless host keep a 0600 file in the user's config folder; the app may keep it in safeStorage.
 */
export function defaultAuditKeyDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.ARCHON_AUDIT_KEY_DIR ?? join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'archon-audit-keys');
}

/** What no tool may ever see, even in a workspace that holds it: the user's home, Archon's data dir, and this key folder. */
export function foldersHiddenFromTools(dataDir: string, env: NodeJS.ProcessEnv = process.env): string[] {
  return [homedir(), dataDir, defaultAuditKeyDir(env)];
}

export interface AuditSecrets {
  key: Buffer;
  /** Where the signed head of the chain is kept, beside the key. */
  headFile: string;
}

export function loadAuditSecrets(dataDir: string, keyDir = defaultAuditKeyDir()): AuditSecrets {
  const id = createHash('sha256').update(dataDir).digest('hex').slice(0, 24);
  mkdirSync(keyDir, { recursive: true, mode: 0o700 });
  const keyFile = join(keyDir, `${id}.key`);
  if (!existsSync(keyFile)) {
    writeFileSync(keyFile, randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
  }
  chmodSync(keyFile, 0o600);
  return { key: Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'hex'), headFile: join(keyDir, `${id}.head`) };
}
