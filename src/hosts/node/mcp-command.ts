import { resolve } from 'node:path';
import { readMcpConfigFile } from '../../core/mcp/mcp-config-file';
import { probeMcpServer, type McpProbe } from '../../core/mcp/probe-server';
import type { ArchonRuntime } from '../../core/runtime';
import { McpSecrets } from '../../core/secrets/mcp-secrets';
import { foldersHiddenFromTools } from '../../core/tools/hidden-folders';
import { workspaceFolder } from '../../core/tools/tool-host';
import type { McpListFlags } from './command-flags';

type Listed = { server: string; disabled: true } | ({ server: string } & McpProbe);

function describe(listed: Listed): string {
  if ('disabled' in listed) return `${listed.server}: disabled in its configuration (not started)\n`;
  if (!listed.ok) return `${listed.server}: FAILED (${listed.failure.kind}) ${listed.failure.message}\n`;
  const width = Math.max(0, ...listed.tools.map((tool) => tool.registeredName.length));
  const lines = listed.tools.map((tool) => `  ${tool.registeredName.padEnd(width)}  ${tool.sideEffects.padEnd(12)}  ${tool.idempotent ? 'idempotent    ' : 'not idempotent'}  ${tool.description.replace(/\s+/g, ' ').slice(0, 80)}`);
  return `${listed.server}: ${listed.tools.length} tool(s)\n${lines.join('\n')}${lines.length > 0 ? '\n' : ''}`;
}

/**
 * `archon mcp list`: starts each configured server as a run would (inside the sandbox), lists its
 * tools with their side effects, and says plainly what failed. Exit 0 when every enabled server
 * answered, 1 otherwise. Env and headers are never printed.
 */
export async function listMcpServers(runtime: ArchonRuntime, flags: McpListFlags): Promise<number> {
  const settings = runtime.store.getSettings();
  const servers = { ...settings.mcpServers, ...(flags.mcpConfig ? readMcpConfigFile(flags.mcpConfig) : {}) };
  const entries = Object.entries(servers).sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) {
    process.stdout.write(flags.json ? '' : 'No MCP servers configured: add "mcpServers" in Settings, or pass --mcp-config FILE.\n');
    return 0;
  }
  const confinement = { workspace: workspaceFolder(resolve(flags.workspace ?? process.cwd())), sandbox: settings.sandbox, allowNetwork: flags.allowNetwork ?? settings.allowNetwork, hidden: foldersHiddenFromTools(runtime.dataDir) };
  const secrets = new McpSecrets(null, runtime.store.secrets);
  const listed: Listed[] = await Promise.all(
    entries.map(async ([server, config]): Promise<Listed> => {
      if (config.disabled) return { server, disabled: true };
      const opened = secrets.open(server, config);
      return { server, ...(opened.ok ? await probeMcpServer(server, opened.config, confinement) : opened) };
    }),
  );
  for (const entry of listed) process.stdout.write(flags.json ? `${JSON.stringify(entry)}\n` : describe(entry));
  return listed.every((entry) => 'disabled' in entry || entry.ok) ? 0 : 1;
}
