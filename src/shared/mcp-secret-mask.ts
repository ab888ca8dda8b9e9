import { ArchonError } from './errors';
import type { McpServerConfig, Settings } from './schemas/settings';

/** What the page sees in place of an MCP server's env or header value; saving it back keeps the saved value. */
export const MASKED_SECRET = '••••••••';

type Secrets = Record<string, string>;

/** Where a server's secrets are: a stdio server's `env`, a URL server's `headers`. */
export function secretsOf(config: McpServerConfig): Secrets | undefined {
  return 'command' in config ? config.env : config.headers;
}

export function withSecrets(config: McpServerConfig, secrets: Secrets): McpServerConfig {
  return 'command' in config ? { ...config, env: secrets } : { ...config, headers: secrets };
}

/** Settings as they cross to the page: env and header values, which hold keys and tokens, masked. */
export function maskMcpSecrets(settings: Settings): Settings {
  const mcpServers = Object.fromEntries(
    Object.entries(settings.mcpServers).map(([name, config]) => {
      const secrets = secretsOf(config);
      return [name, secrets ? withSecrets(config, Object.fromEntries(Object.keys(secrets).map((key) => [key, MASKED_SECRET]))) : config];
    }),
  );
  return { ...settings, mcpServers };
}

function originOf(url: string): string | null {
  return URL.canParse(url) ? new URL(url).origin : null;
}

/** Whether saved values may go to this config: the same origin, or the same command and arguments (they were given for that one). */
function sameRecipient(config: McpServerConfig, saved: McpServerConfig): boolean {
  if ('command' in config) return 'command' in saved && config.command === saved.command && JSON.stringify(config.args ?? []) === JSON.stringify(saved.args ?? []);
  return 'url' in saved && originOf(config.url) !== null && originOf(config.url) === originOf(saved.url);
}

/**
 * A server's config from the page with each masked value put back from the saved config of the same
 * name, only while it goes where it went: a changed URL origin, command or arguments must have its
 * values typed again.
 */
export function unmaskMcpServer(name: string, config: McpServerConfig, saved: Settings['mcpServers']): McpServerConfig {
  const secrets = secretsOf(config);
  if (!secrets) return config;
  const field = `mcpServers.${name}.${'command' in config ? 'env' : 'headers'}`;
  const masked = Object.keys(secrets).filter((key) => secrets[key] === MASKED_SECRET);
  const previous = saved[name];
  if (masked.length > 0 && previous && !sameRecipient(config, previous)) {
    const changed = 'command' in config ? 'command or arguments' : 'URL origin';
    throw new ArchonError('VALIDATION_FAILED', `${name}'s ${changed} changed, so its saved values are not sent to it: type ${masked.map((key) => `${field}.${key}`).join(', ')} again.`);
  }
  const before = (previous && secretsOf(previous)) ?? {};
  const restored = Object.entries(secrets).map(([key, value]) => {
    if (value !== MASKED_SECRET) return [key, value];
    const kept = before[key];
    if (kept === undefined || kept === MASKED_SECRET) throw new ArchonError('VALIDATION_FAILED', `${field}.${key} is masked but nothing is saved for it: type its value.`);
    return [key, kept];
  });
  return withSecrets(config, Object.fromEntries(restored));
}

export function unmaskMcpServers(servers: Settings['mcpServers'], saved: Settings['mcpServers']): Settings['mcpServers'] {
  return Object.fromEntries(Object.entries(servers).map(([name, config]) => [name, unmaskMcpServer(name, config, saved)]));
}
