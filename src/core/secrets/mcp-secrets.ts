import { ArchonError } from '../../shared/errors';
import { secretsOf, withSecrets } from '../../shared/mcp-secret-mask';
import type { McpServerConfig } from '../../shared/schemas/settings';
import type { McpFailure } from '../mcp/mcp-failure';
import type { SecretVault } from './api-keys';
import type { SecretRedactor } from './redactor';

/** How a value sealed by the OS keychain is written in Settings (`env` and `headers` of MCP servers). */
export const SEALED_PREFIX = 'sealed:';

type Values = Record<string, string>;

/** Parts that make any name a credential's wherever they occur in it. */
const SECRET_PART = /TOKEN|KEY|SECRET|PASSWORD|PASSWD|PASSPHRASE|PASSCODE|AUTH|CREDENTIAL|COOKIE|SESSION|PRIVATE|SIGNATURE|CREDIT.?CARD|CARD.?NUMBER|IBAN|MNEMONIC/i;
/** Whole words that name a credential only as a word of their own (`pin`, not `spinner`). */
const SECRET_WORDS = new Set(['pass', 'pin', 'otp', 'totp', 'hotp', 'mfa', '2fa', 'cvv', 'cvc', 'cvv2', 'ssn', 'tan']);

function wordsOf(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/**
 * Whether a name (an env variable, a form field) looks like a credential's: the one rule for both.
 * Other values (a path, `production`) are ordinary text.
 */
export function isSecretName(name: string): boolean {
  return SECRET_PART.test(name) || wordsOf(name).some((word) => SECRET_WORDS.has(word));
}

/** What is stored of a form a server asked for: fields named like credentials blanked (the server still gets them). */
export function withoutSecretFields(content: unknown): unknown {
  if (content === null || typeof content !== 'object' || Array.isArray(content)) return content;
  return Object.fromEntries(Object.entries(content).map(([key, value]) => [key, isSecretName(key) ? REDACTED_FIELD : value]));
}

export const REDACTED_FIELD = '[redacted]';

/** Which opened values the redactor must blank: every header value; an env value when it was sealed or its name looks secret. */
function isSecret(config: McpServerConfig, key: string, sealed: boolean): boolean {
  return !('command' in config) || sealed || isSecretName(key);
}

/** A header's token after its scheme word ("Bearer …") is a secret of its own. */
function secretParts(value: string): string[] {
  return [value, value.split(' ').at(-1) ?? value];
}

/**
 * The secrets of MCP servers (the values of `env` and `headers`): sealed by the OS keychain before
 * Settings store them, opened only to start a server, and known to the redactor from then on, so no
 * event, stored result or model request shows them (a plain env value only when its name looks secret). Without a keychain (the CLI, `archon serve`)
 * nothing can be sealed: saving such values is refused, and sealed ones cannot be opened.
 */
export class McpSecrets {
  constructor(
    private readonly vault: SecretVault | null,
    private readonly redactor: SecretRedactor,
  ) {}

  /** Every value not sealed yet, sealed (values already sealed are kept as they are). */
  seal(servers: Readonly<Record<string, McpServerConfig>>): Record<string, McpServerConfig> {
    return Object.fromEntries(Object.entries(servers).map(([name, config]) => [name, withSecrets(config, this.sealValues(name, secretsOf(config) ?? {}))]));
  }

  private sealValues(server: string, values: Values): Values {
    return Object.fromEntries(
      Object.entries(values).map(([key, value]) => {
        if (value.startsWith(SEALED_PREFIX)) return [key, value];
        if (!this.vault) {
          throw new ArchonError('CONFIG_INVALID', `The MCP server "${server}" has ${key} in its env or headers, which Settings keep only sealed by the OS keychain, and there is none here. Use the app, or pass the server with --mcp-config FILE.`);
        }
        this.redactor.add(value);
        return [key, `${SEALED_PREFIX}${this.vault.encrypt(value).toString('base64')}`];
      }),
    );
  }

  /** The configuration a server starts with: its sealed values opened, its secret ones known to the redactor. */
  open(server: string, config: McpServerConfig): { ok: true; config: McpServerConfig } | { ok: false; failure: McpFailure } {
    const opened: Values = {};
    for (const [key, value] of Object.entries(secretsOf(config) ?? {})) {
      if (!value.startsWith(SEALED_PREFIX)) opened[key] = value;
      else if (!this.vault) {
        return { ok: false, failure: { kind: 'sealed', message: `MCP server "${server}": ${key} is sealed by the app's OS keychain, which is not available here. Use the app, or pass the server with its values in --mcp-config FILE.` } };
      } else {
        try {
          opened[key] = this.vault.decrypt(Buffer.from(value.slice(SEALED_PREFIX.length), 'base64'));
        } catch {
          return { ok: false, failure: { kind: 'sealed', message: `MCP server "${server}": ${key} could not be unsealed (sealed by another keychain?). Enter it again in Settings.` } };
        }
      }
      if (!isSecret(config, key, value.startsWith(SEALED_PREFIX))) continue;
      for (const part of secretParts(opened[key] as string)) this.redactor.add(part);
    }
    return { ok: true, config: withSecrets(config, opened) };
  }
}
