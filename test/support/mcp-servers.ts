import { fileURLToPath } from 'node:url';
import { McpSessions } from '../../src/core/mcp/mcp-sessions';
import { mcpToolset } from '../../src/core/mcp/mcp-toolset';
import type { ArchonStore } from '../../src/core/store/archon-store';
import type { McpServerConfig } from '../../src/shared/schemas/settings';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The reference server's entry script, started with this Node (the one the tests run on). */
export const EVERYTHING_SCRIPT = `${root}node_modules/@modelcontextprotocol/server-everything/dist/index.js`;
export const FILESYSTEM_SCRIPT = `${root}node_modules/@modelcontextprotocol/server-filesystem/dist/index.js`;
export const CHANGING_SERVER = `${root}test/fixtures/mcp/changing-server.mjs`;
export const ELICITING_SERVER = `${root}test/fixtures/mcp/eliciting-server.mjs`;
export const STORMING_SERVER = `${root}test/fixtures/mcp/storming-server.mjs`;
export const EFFECT_THEN_EXIT_SERVER = `${root}test/fixtures/mcp/effect-then-exit-server.mjs`;

export function everythingStdio(): McpServerConfig {
  return { command: process.execPath, args: [EVERYTHING_SCRIPT, 'stdio'] };
}

export function filesystemServer(workspace: string): McpServerConfig {
  return { command: process.execPath, args: [FILESYSTEM_SCRIPT, workspace] };
}

/** Servers that fail at start in each of the ways `archon mcp list` names. */
export const FAILING_SERVERS: Record<'missing' | 'crashing' | 'hanging', McpServerConfig> = {
  missing: { command: 'archon-no-such-mcp-server' },
  crashing: { command: '/bin/sh', args: ['-c', 'echo "cannot open the database" >&2; exit 7'] },
  hanging: { command: '/bin/sh', args: ['-c', 'exec sleep 600'] },
};

/** Sees each server's tool definitions as a run would, so approval settings made next are made against them. */
export async function seeDefinitions(store: ArchonStore, servers: Record<string, McpServerConfig>, workspace: string): Promise<void> {
  const sessions = new McpSessions();
  try {
    const confinement = { workspace, sandbox: 'on' as const, allowNetwork: false, hidden: [] };
    await mcpToolset({ servers, sessions, definitions: store.toolDefinitions, confinement, disabledTools: [], now: () => new Date(), signal: AbortSignal.timeout(60_000) });
  } finally {
    await sessions.close();
  }
}
