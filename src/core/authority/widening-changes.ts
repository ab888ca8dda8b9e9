import { realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { canonicalJson } from '../../shared/canonical-json';
import { stricter } from '../../shared/policy';
import type { StartRunInput } from '../../shared/schemas/run-detail';
import type { Policy, RunOptions } from '../../shared/schemas/run';
import type { StoredRole } from '../../shared/schemas/roles';
import type { McpServerConfig, Settings, SettingsPatch, ToolApprovalOverride } from '../../shared/schemas/settings';

/** How much a per-tool setting asks of a person: lower is looser. */
const ASKING: Record<ToolApprovalOverride, number> = { never: 0, default: 1, always: 2 };

function looser(from: Policy, to: Policy): boolean {
  return from !== to && stricter(from, to) === from;
}

/** The path as the tool host will use it: links resolved, so a link inside the workspace cannot stand for somewhere else. */
function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

function inside(folder: string, path: string): boolean {
  const rest = relative(real(folder), real(path));
  return rest === '' || (!rest.startsWith('..') && !isAbsolute(rest));
}

/** What a server gets to do, in words: the command it runs or the address it is reached at (never its env or headers, which hold secrets). */
function serverReach(config: McpServerConfig): string {
  return 'command' in config ? `command "${[config.command, ...(config.args ?? [])].join(' ')}"` : `URL ${config.url}`;
}

/** What runs or is reached, with what; whether it is on is a separate question, and a left-out list is an empty one. */
function authorityOf(config: McpServerConfig): string {
  return canonicalJson('command' in config ? { command: config.command, args: config.args ?? [], env: config.env ?? {} } : { url: config.url, headers: config.headers ?? {} });
}

function sameServer(a: McpServerConfig, b: McpServerConfig): boolean {
  return authorityOf(a) === authorityOf(b);
}

/** New tools for agents: a server added, turned on, or pointed at something else; removed or disabled ones narrow and are not listed. */
function mcpWidening(current: Settings['mcpServers'], next: Settings['mcpServers']): string[] {
  return Object.entries(next).flatMap(([name, config]) => {
    const before = current[name];
    if (config.disabled) return [];
    if (!before) return [`the MCP server ${name} added (${serverReach(config)})`];
    if (!sameServer(before, config)) return [`the MCP server ${name} changed (now ${serverReach(config)})`];
    return before.disabled ? [`the MCP server ${name} turned on`] : [];
  });
}

function toolsInWords(tools: StoredRole['tools']): string {
  return tools === 'all' ? 'all tools' : `the tools ${tools.join(', ')}`;
}

/** A role that may call more tools or talk to another model server; a role removed, or given fewer tools, narrows and is not listed. */
function rolesWidening(current: Settings['roles'], next: Settings['roles']): string[] {
  return Object.entries(next).flatMap(([name, role]) => {
    const before = current[name];
    const server = role.model && role.model.url !== before?.model?.url ? ` (model server ${role.model.url})` : '';
    if (!before) return role.tools.length === 0 && !server ? [] : [`the role ${name} added with ${toolsInWords(role.tools)}${server}`];
    const added = role.tools === 'all' ? (before.tools === 'all' ? [] : 'all') : role.tools.filter((tool) => before.tools !== 'all' && !before.tools.includes(tool));
    const changes = added.length > 0 ? [`the role ${name} given ${toolsInWords(added)}`] : [];
    return server ? [...changes, `the role ${name} pointed at another model server${server}`] : changes;
  });
}

/** Starting a server from the page to list its tools runs its command: only a saved server may start without the operator's yes. */
export function mcpProbeWidening(current: Settings, name: string, config: McpServerConfig): string[] {
  const saved = current.mcpServers[name];
  return saved && sameServer(saved, config) ? [] : [`start the MCP server ${name} (${serverReach(config)}) to list its tools`];
}

/** The changes in a settings patch that widen what agents may do, in words for the operator; narrowing ones are not listed. */
export function settingsWidening(current: Settings, patch: SettingsPatch): string[] {
  const changes: string[] = [];
  if (patch.policy && looser(current.policy, patch.policy)) changes.push(`policy from ${current.policy} to the looser ${patch.policy}`);
  if (patch.toolApproval) {
    for (const tool of new Set([...Object.keys(current.toolApproval), ...Object.keys(patch.toolApproval)])) {
      const from = current.toolApproval[tool] ?? 'default';
      const to = patch.toolApproval[tool] ?? 'default';
      if (ASKING[to] < ASKING[from]) changes.push(`approval of ${tool} from "${from}" to "${to}"`);
    }
  }
  if (patch.disabledTools) {
    for (const tool of current.disabledTools.filter((name) => !patch.disabledTools?.includes(name))) changes.push(`the tool ${tool} turned on`);
  }
  if (patch.networkTools && !current.networkTools) changes.push('network tools turned on');
  if (patch.allowNetwork && !current.allowNetwork) changes.push('network access for commands turned on');
  if (patch.sandbox === 'off' && current.sandbox !== 'off') changes.push('the sandbox for commands turned off');
  if (patch.mcpServers) changes.push(...mcpWidening(current.mcpServers, patch.mcpServers));
  if (patch.roles) changes.push(...rolesWidening(current.roles, patch.roles));
  return changes;
}

/** The ways a run started from the UI would go beyond the operator's defaults: another workspace, a looser policy. */
export function runWidening(defaults: Pick<RunOptions, 'workspace' | 'policy'>, input: Pick<StartRunInput, 'workspace' | 'policy'>): string[] {
  const changes: string[] = [];
  if (input.workspace !== undefined && !inside(defaults.workspace, input.workspace)) changes.push(`workspace ${real(input.workspace)} instead of ${defaults.workspace}`);
  if (input.policy && looser(defaults.policy, input.policy)) changes.push(`policy ${input.policy}, looser than ${defaults.policy}`);
  return changes;
}
