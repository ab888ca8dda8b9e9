import { describe, expect, it } from 'vitest';
import type { SecretVault } from '../../../src/core/secrets/api-keys';
import { McpSecrets, SEALED_PREFIX } from '../../../src/core/secrets/mcp-secrets';
import { SecretRedactor } from '../../../src/core/secrets/redactor';

/** A stand-in keychain: reversible, and visibly not the clear text. */
const vault: SecretVault = {
  encrypt: (plain) => Buffer.from([...plain].reverse().join(''), 'utf8'),
  decrypt: (sealed) => [...sealed.toString('utf8')].reverse().join(''),
};

const servers = { local: { command: 'srv', env: { API_TOKEN: 'token-1234567890' } }, remote: { url: 'https://mcp.example/mcp', headers: { Authorization: 'Bearer bearer-abcdefghij' } } };

describe('McpSecrets', () => {
  it('seals env and header values before Settings store them, and opens them only to start a server, telling the redactor', () => {
    const redactor = new SecretRedactor();
    const secrets = new McpSecrets(vault, redactor);
    const sealed = secrets.seal(servers);
    expect(JSON.stringify(sealed)).not.toContain('token-1234567890');
    expect(JSON.stringify(sealed)).not.toContain('bearer-abcdefghij');
    expect(sealed.local).toEqual({ command: 'srv', env: { API_TOKEN: expect.stringMatching(new RegExp(`^${SEALED_PREFIX}`)) } });
    expect(secrets.seal(sealed)).toEqual(sealed);

    const fresh = new McpSecrets(vault, new SecretRedactor());
    expect(fresh.open('local', sealed.local as never)).toEqual({ ok: true, config: servers.local });
    const opened = new SecretRedactor();
    new McpSecrets(vault, opened).open('remote', sealed.remote as never);
    expect(opened.redact('sent Bearer bearer-abcdefghij and bearer-abcdefghij')).toBe('sent [redacted] and [redacted]');
  });

  it('a plain env value is blanked only when its name looks secret: paths and words like production stay readable', () => {
    const redactor = new SecretRedactor();
    const config = { command: 'srv', env: { NODE_ENV: 'production', DATA_ROOT: '/srv/shared/data', GITHUB_TOKEN: 'ghp-plain-1234567890', DB_PASSWORD: 'hunter2hunter2' } };
    expect(new McpSecrets(null, redactor).open('local', config)).toEqual({ ok: true, config });
    expect(redactor.redact('production data in /srv/shared/data via ghp-plain-1234567890 and hunter2hunter2')).toBe('production data in /srv/shared/data via [redacted] and [redacted]');
  });

  it('without a keychain: saving values is refused and sealed values cannot be opened, saying what to do', () => {
    const sealed = new McpSecrets(vault, new SecretRedactor()).seal(servers);
    const none = new McpSecrets(null, new SecretRedactor());
    expect(() => none.seal(servers)).toThrow(/"local".*API_TOKEN.*--mcp-config/);
    expect(none.open('local', sealed.local as never)).toMatchObject({ ok: false, failure: { kind: 'sealed', message: expect.stringContaining('--mcp-config') } });
    expect(none.open('plain', servers.local)).toEqual({ ok: true, config: servers.local });
  });
});
