import { ArchonError } from './errors';
import type { McpServerConfig, Settings } from './schemas/settings';

/** What the page sees in place of an MCP server's env or header value; saving it back keeps the saved value. */
export const MASKED_SECRET = '••••••••';

type Secrets = Record<string, string>;

function secretsOf(config: McpServerConfig): Secrets | undefined {
  return 'command' in config ? config.env : config.headers;
}

function withSecrets(config: McpServerConfig, secrets: Secrets): McpServerConfig {
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

/** A server's config from the page with each masked value put back from the saved config of the same name. */
export function unmaskMcpServer(name: string, config: McpServerConfig, saved: Settings['mcpServers']): McpServerConfig {
  const secrets = secretsOf(config);
  if (!secrets) return config;
  const before = secretsOf(saved[name] ?? config) ?? {};
  const restored = Object.entries(secrets).map(([key, value]) => {
    if (value !== MASKED_SECRET) return [key, value];
    const kept = before[key];
    if (kept === undefined || kept === MASKED_SECRET) {
      throw new ArchonError('VALIDATION_FAILED', `mcpServers.${name}.${'command' in config ? 'env' : 'headers'}.${key} is masked but nothing is saved for it: type its value.`);
    }
    return [key, kept];
  });
  return withSecrets(config, Object.fromEntries(restored));
}

export function unmaskMcpServers(servers: Settings['mcpServers'], saved: Settings['mcpServers']): Settings['mcpServers'] {
  return Object.fromEntries(Object.entries(servers).map(([name, config]) => [name, unmaskMcpServer(name, config, saved)]));
}
