import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ArchonError } from '../../shared/errors';
import { parseJsonOrUndefined } from '../../shared/json';
import type { SecretRedactor } from './redactor';

/** The operating system's keychain as the app reaches it (Electron's safeStorage); the core never imports electron. */
export interface SecretVault {
  encrypt(plain: string): Buffer;
  decrypt(sealed: Buffer): string;
}

export const API_KEYS_FILE = 'api-keys.json';

const SavedKeysSchema = z.record(z.string(), z.base64());

/** Scheme, host and port: a key given for one is never sent to another. */
export function originOf(url: string): string {
  return new URL(url).origin;
}

/**
 * API keys, each bound to one endpoint origin. A key is sent only to the origin it was given for;
 * probing or running against another needs the key given again. With a vault (the app), keys are
 * saved sealed by the OS keychain in the data dir; without one (the CLI, `archon serve`) they live
 * in memory only. Every key is also handed to the redactor, so it is never stored in clear.
 */
export class ApiKeys {
  private readonly keys = new Map<string, string>();

  constructor(
    private readonly redactor: SecretRedactor,
    private readonly saved: { file: string; vault: SecretVault } | null = null,
  ) {
    if (saved && existsSync(saved.file)) this.load(saved.file, saved.vault);
  }

  /** The app's keys, sealed by the vault in `api-keys.json` in the data dir. */
  static saved(dataDir: string, redactor: SecretRedactor, vault: SecretVault): ApiKeys {
    return new ApiKeys(redactor, { file: join(dataDir, API_KEYS_FILE), vault });
  }

  private load(file: string, vault: SecretVault): void {
    const parsed = SavedKeysSchema.safeParse(parseJsonOrUndefined(readFileSync(file, 'utf8')));
    if (!parsed.success) throw new ArchonError('CONFIG_INVALID', `${file} is not a file of saved API keys. Move it aside and give the keys again.`);
    for (const [origin, sealed] of Object.entries(parsed.data)) {
      const key = vault.decrypt(Buffer.from(sealed, 'base64'));
      this.redactor.add(key);
      this.keys.set(origin, key);
    }
  }

  /** Binds `key` to the origin of `url` for this process (a key from the command line or the environment). */
  remember(url: string, key: string): void {
    this.redactor.add(key);
    this.keys.set(originOf(url), key);
  }

  /** Binds `key` to the origin of `url`, replacing that origin's key, and keeps it in the vault when there is one. */
  save(url: string, key: string): void {
    this.remember(url, key);
    if (this.saved) this.persist(this.saved.file, this.saved.vault);
  }

  keyFor(url: string): string | undefined {
    return this.keys.get(originOf(url));
  }

  private persist(file: string, vault: SecretVault): void {
    const sealed = Object.fromEntries([...this.keys].map(([origin, key]) => [origin, vault.encrypt(key).toString('base64')]));
    const temporary = `${file}.tmp`;
    writeFileSync(temporary, JSON.stringify(sealed), { mode: 0o600 });
    renameSync(temporary, file);
  }
}
