import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ArchonError, describeZodError } from '../../shared/errors';
import { McpConfigFileSchema, type McpServerConfig } from '../../shared/schemas/settings';

/** `--mcp-config FILE`: Claude Desktop's `{"mcpServers": {…}}`; a file that cannot be used says which and why. */
export function readMcpConfigFile(path: string): Record<string, McpServerConfig> {
  const file = resolve(path);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ArchonError('CONFIG_INVALID', `The MCP configuration ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}). Pass --mcp-config with an existing JSON file.`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ArchonError('CONFIG_INVALID', `The MCP configuration ${file} is not valid JSON: ${(error as Error).message}. It holds {"mcpServers": {"NAME": {"command": …} or {"url": …}}}.`);
  }
  const parsed = McpConfigFileSchema.safeParse(json);
  if (!parsed.success) {
    throw new ArchonError('CONFIG_INVALID', `The MCP configuration ${file} is not usable: ${describeZodError(parsed.error)}. Each server is {"command", "args"?, "env"?} or {"url", "headers"?}, named by 1-32 letters, digits, "_" or "-".`);
  }
  return parsed.data.mcpServers;
}
