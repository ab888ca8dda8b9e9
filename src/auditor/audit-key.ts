import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { auditKeyDir } from '../shared/audit-key-dir';

/** The data dir's own random id, in a file that moves with the folder: a moved data dir keeps its key. */
export const DATA_DIR_ID_FILE = 'data-dir-id';

/**
 * The auditor's HMAC key and the log's signed head live outside the data dir, so whoever can write
 * the data dir (an agent's tool, a stray script) cannot rewrite the log and re-sign it. The CLI and
 * the headless host keep a 0600 file in the user's config folder; the app may keep it in safeStorage.
 */
export function defaultAuditKeyDir(env: NodeJS.ProcessEnv = process.env): string {
  return auditKeyDir(env, homedir());
}


export interface AuditSecrets {
  /** The data dir's id, which names the key and the head. */
  id: string;
  /** Null when there is no key for this data dir (yet, or any more): the auditor never makes one up silently. */
  key: Buffer | null;
  keyFile: string;
  /** Where the signed head of the chain is kept, beside the key. */
  headFile: string;
  /** The highest head ever signed, beside the key: never lowered but by a reset, so an older log and head restored together are caught. */
  anchorFile: string;
}

function writeOnce(file: string, content: string): void {
  try {
    writeFileSync(file, content, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    // Another process made it first: theirs stands.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/** The data dir's id, made on first use. */
export function dataDirId(dataDir: string): string {
  const file = join(dataDir, DATA_DIR_ID_FILE);
  if (!existsSync(file)) writeOnce(file, `${randomBytes(12).toString('hex')}\n`);
  return readFileSync(file, 'utf8').trim();
}

/** Finds this data dir's key and head; creates neither (see `createAuditKey`). */
export function findAuditSecrets(dataDir: string, keyDir = defaultAuditKeyDir()): AuditSecrets {
  const id = dataDirId(dataDir);
  const keyFile = join(keyDir, `${id}.key`);
  const key = existsSync(keyFile) ? Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'hex') : null;
  return { id, key, keyFile, headFile: join(keyDir, `${id}.head`), anchorFile: join(keyDir, `${id}.anchor`) };
}

/** A new key, for a data dir that has no audit chain yet or whose reset the operator acknowledged. */
export function createAuditKey(secrets: AuditSecrets): AuditSecrets {
  mkdirSync(join(secrets.keyFile, '..'), { recursive: true, mode: 0o700 });
  writeOnce(secrets.keyFile, randomBytes(32).toString('hex'));
  chmodSync(secrets.keyFile, 0o600);
  return { ...secrets, key: Buffer.from(readFileSync(secrets.keyFile, 'utf8').trim(), 'hex') };
}
