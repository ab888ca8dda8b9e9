import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { API_KEYS_FILE, ApiKeys, type SecretVault } from '../../../src/core/secrets/api-keys';
import { SecretRedactor } from '../../../src/core/secrets/redactor';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();

/** A stand-in keychain: reversible, and never the plain text. */
const vault: SecretVault = {
  encrypt: (plain) => Buffer.from(Buffer.from(plain, 'utf8').map((byte) => byte ^ 0x5a)),
  decrypt: (sealed) => Buffer.from(sealed.map((byte) => byte ^ 0x5a)).toString('utf8'),
};

describe('ApiKeys', () => {
  it('sends a key only to the origin it was given for', () => {
    const keys = new ApiKeys(new SecretRedactor());
    keys.remember('http://127.0.0.1:8080/v1', 'KEY-FOR-8080');
    expect(keys.keyFor('http://127.0.0.1:8080/other/v1')).toBe('KEY-FOR-8080');
    expect(keys.keyFor('http://127.0.0.1:8081/v1')).toBeUndefined();
    expect(keys.keyFor('https://127.0.0.1:8080/v1')).toBeUndefined();
    expect(keys.keyFor('http://localhost:8080/v1')).toBeUndefined();
  });

  it('saves keys sealed by the vault in a 0600 file, and opens them again', () => {
    const dataDir = tempDir();
    const first = ApiKeys.saved(dataDir, new SecretRedactor(), vault);
    first.save('https://api.example.com/v1', 'sk-example-123456');
    const file = join(dataDir, API_KEYS_FILE);
    expect(readFileSync(file, 'utf8')).not.toContain('sk-example-123456');
    expect((statSync(file).mode & 0o777).toString(8)).toBe('600');

    const redactor = new SecretRedactor();
    const second = ApiKeys.saved(dataDir, redactor, vault);
    expect(second.keyFor('https://api.example.com/v1')).toBe('sk-example-123456');
    expect(second.keyFor('https://evil.example.com/v1')).toBeUndefined();
    expect(redactor.redact('printed sk-example-123456')).toBe('printed [redacted]');
  });

  it('keeps keys from the environment in memory only', () => {
    const dataDir = tempDir();
    ApiKeys.saved(dataDir, new SecretRedactor(), vault).remember('http://127.0.0.1:1/v1', 'FROM-THE-ENVIRONMENT');
    expect(ApiKeys.saved(dataDir, new SecretRedactor(), vault).keyFor('http://127.0.0.1:1/v1')).toBeUndefined();
  });

  it('refuses a damaged key file, saying what to do', () => {
    const dataDir = tempDir();
    writeFileSync(join(dataDir, API_KEYS_FILE), 'not json');
    expect(() => ApiKeys.saved(dataDir, new SecretRedactor(), vault)).toThrow(/not a file of saved API keys.*give the keys again/);
  });
});
