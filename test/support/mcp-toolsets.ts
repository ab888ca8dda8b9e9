import { afterEach } from 'vitest';
import { McpSessions } from '../../src/core/mcp/mcp-sessions';
import { mcpToolset } from '../../src/core/mcp/mcp-toolset';
import { ArchonStore } from '../../src/core/store/archon-store';
import { ToolRegistry } from '../../src/core/tools/tool-registry';
import type { McpServerConfig } from '../../src/shared/schemas/settings';
import { useTempDirs } from './temp-dir';

/**
 * Real MCP servers as a run's tools, sandboxed in `workspace`, their definitions in a store of their
 * own; the sessions and stores are closed after each test.
 */
export function useMcpToolsets() {
  const tempDir = useTempDirs();
  const open: { sessions: McpSessions; store: ArchonStore }[] = [];
  afterEach(async () => {
    for (const { sessions, store } of open.splice(0)) {
      await sessions.close();
      store.close();
    }
  });
  return async (servers: Record<string, McpServerConfig>, workspace = tempDir(), dataDir = tempDir()) => {
    const sessions = new McpSessions();
    const store = ArchonStore.open(dataDir);
    open.push({ sessions, store });
    const toolset = await mcpToolset({
      servers,
      sessions,
      definitions: store.toolDefinitions,
      confinement: { workspace, sandbox: 'on', allowNetwork: false, hidden: [] },
      disabledTools: [],
      now: () => new Date(),
      signal: AbortSignal.timeout(60_000),
    });
    return { ...toolset, registry: new ToolRegistry(toolset.tools, toolset.notices), workspace, sessions, store };
  };
}
