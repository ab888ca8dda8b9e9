import { realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { stricter } from '../../shared/policy';
import type { StartRunInput } from '../../shared/schemas/run-detail';
import type { Policy, RunOptions } from '../../shared/schemas/run';
import { canonicalJson } from '../../shared/canonical-json';
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
  return changes;
}

/** An MCP server added, turned on, or started otherwise (its command, arguments, env, URL or headers) gives agents new tools. */
function mcpWidening(current: Settings['mcpServers'], next: Settings['mcpServers']): string[] {
  const started = ({ disabled: _disabled, ...config }: McpServerConfig) => canonicalJson(config);
  return Object.entries(next).flatMap(([name, config]) => {
    const before = current[name];
    if (config.disabled) return [];
    if (!before) return [`the MCP server ${name} added`];
    if (before.disabled) return [`the MCP server ${name} turned on`];
    return started(before) === started(config) ? [] : [`the MCP server ${name} changed`];
  });
}

/** The ways a run started from the UI would go beyond the operator's defaults: another workspace, a looser policy. */
export function runWidening(defaults: Pick<RunOptions, 'workspace' | 'policy'>, input: Pick<StartRunInput, 'workspace' | 'policy'>): string[] {
  const changes: string[] = [];
  if (input.workspace !== undefined && !inside(defaults.workspace, input.workspace)) changes.push(`workspace ${real(input.workspace)} instead of ${defaults.workspace}`);
  if (input.policy && looser(defaults.policy, input.policy)) changes.push(`policy ${input.policy}, looser than ${defaults.policy}`);
  return changes;
}
