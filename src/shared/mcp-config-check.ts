import type { z } from 'zod';
import { McpConfigFileSchema, McpServerConfigSchema, McpServerNameSchema, type McpServerConfig } from './schemas/settings';

export type McpConfigCheck = { ok: true; servers: Record<string, McpServerConfig> } | { ok: false; problems: string[] };

const [STDIO, HTTP] = McpServerConfigSchema.options;
const WHICH = 'give either "command" (and optional "args", "env") to start it, or "url" (and optional "headers") to reach it';

function problemsOf(error: z.ZodError, prefix: (string | number)[]): string[] {
  return error.issues.map((issue) => `${[...prefix, ...issue.path].join('.')}: ${issue.message}`);
}

function serverProblems(name: string, value: unknown): string[] {
  const path = ['mcpServers', name];
  const named = McpServerNameSchema.safeParse(name);
  const problems = named.success ? [] : problemsOf(named.error, path);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [...problems, `${path.join('.')}: expected an object; ${WHICH}.`];
  const variant = 'command' in value ? STDIO : 'url' in value ? HTTP : null;
  if (!variant) return [...problems, `${path.join('.')}: ${WHICH}.`];
  const parsed = variant.safeParse(value);
  return parsed.success ? problems : [...problems, ...problemsOf(parsed.error, path)];
}

/**
 * The `{"mcpServers": {…}}` JSON Claude Desktop and Cursor write, checked field by field: each problem
 * names the path of the bad field and what to put there.
 */
export function checkMcpConfigText(text: string): McpConfigCheck {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, problems: [`Not valid JSON (${(error as Error).message}): check quotes, commas and braces.`] };
  }
  const parsed = McpConfigFileSchema.safeParse(value);
  if (parsed.success) return { ok: true, servers: parsed.data.mcpServers };
  const servers = typeof value === 'object' && value !== null ? (value as { mcpServers?: unknown }).mcpServers : undefined;
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) {
    return { ok: false, problems: ['mcpServers: expected {"mcpServers": {"NAME": {…}}}, an object of servers by name.'] };
  }
  const problems = Object.entries(servers).flatMap(([name, config]) => serverProblems(name, config));
  return { ok: false, problems: problems.length > 0 ? problems : problemsOf(parsed.error, []) };
}
