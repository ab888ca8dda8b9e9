import { fileURLToPath } from 'node:url';
import type { McpServerConfig } from '../../src/shared/schemas/settings';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The reference server's entry script, started with this Node (the one the tests run on). */
export const EVERYTHING_SCRIPT = `${root}node_modules/@modelcontextprotocol/server-everything/dist/index.js`;
export const FILESYSTEM_SCRIPT = `${root}node_modules/@modelcontextprotocol/server-filesystem/dist/index.js`;
export const CHANGING_SERVER = `${root}test/fixtures/mcp/changing-server.mjs`;

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
