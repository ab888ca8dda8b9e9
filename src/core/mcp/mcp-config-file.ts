import { McpConfigFileSchema, type McpServerConfig } from '../../shared/schemas/settings';
import { readJsonConfigFile } from '../json-config-file';

/** `--mcp-config FILE`: Claude Desktop's `{"mcpServers": {…}}`; a file that cannot be used says which and why. */
export function readMcpConfigFile(path: string): Record<string, McpServerConfig> {
  return readJsonConfigFile(path, McpConfigFileSchema, {
    label: 'MCP configuration',
    flag: '--mcp-config',
    shape: '{"mcpServers": {"NAME": {"command", "args"?, "env"?} or {"url", "headers"?}}}, each NAME 1-32 letters, digits, "_" or "-"',
  }).mcpServers;
}
