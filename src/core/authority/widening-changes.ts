import { realpathSync } from 'node:fs';
import type { Schedule } from '../../shared/schemas/run-order';
import { isAbsolute, relative, resolve } from 'node:path';
import { canonicalJson } from '../../shared/canonical-json';
import { stricter } from '../../shared/policy';
import type { StartRunInput } from '../../shared/schemas/run-detail';
import type { Policy, RunOptions } from '../../shared/schemas/run';
import type { StoredRole } from '../../shared/schemas/roles';
import type { McpServerConfig, Settings, SettingsPatch, ToolApprovalOverride } from '../../shared/schemas/settings';
import { priceFor } from '../budget/pricing';
import { isBuiltinModelUrl } from '../../shared/model-presets';

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

/** Whether `path` is `folder` or lies under it, links resolved. */
export function insideFolder(folder: string, path: string): boolean {
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

function briefly(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/** A role that may call more tools or talk to another model server; a role removed, or given fewer tools, narrows and is not listed. */
function rolesWidening(current: Settings['roles'], next: Settings['roles']): string[] {
  return Object.entries(next).flatMap(([name, role]) => {
    const before = current[name];
    const server = role.model && role.model.url !== before?.model?.url ? ` (model server ${role.model.url})` : '';
    const prompt = role.systemPrompt !== undefined && role.systemPrompt !== before?.systemPrompt ? [`the role ${name} told, in its system prompt: "${briefly(role.systemPrompt)}"`] : [];
    if (!before) return role.tools.length === 0 && !server ? prompt : [`the role ${name} added with ${toolsInWords(role.tools)}${server}`, ...prompt];
    const added = role.tools === 'all' ? (before.tools === 'all' ? [] : 'all') : role.tools.filter((tool) => before.tools !== 'all' && !before.tools.includes(tool));
    const changes = added.length > 0 ? [`the role ${name} given ${toolsInWords(added)}`] : [];
    return [...changes, ...(server ? [`the role ${name} pointed at another model server${server}`] : []), ...prompt];
  });
}

/**
 * Starting a server from the page to list its tools runs its command: only a server the operator
 * allowed (saved and on: adding or turning one on asks) may start without their yes. One saved
 * turned off was never asked about, since saving it so is not a widening.
 */
export function mcpProbeWidening(current: Settings, name: string, config: McpServerConfig): string[] {
  const saved = current.mcpServers[name];
  return saved && !saved.disabled && sameServer(saved, config) ? [] : [`start the MCP server ${name} (${serverReach(config)}) to list its tools`];
}

/** A cap where null is none: raised, or taken away. */
function capLoosened(from: number | null, to: number | null | undefined): boolean {
  return to !== undefined && from !== null && (to === null || to > from);
}

function capInWords(cap: number | null): string {
  return cap === null ? 'none' : String(cap);
}

const CAPS = {
  dailyMaxTokens: 'the daily token cap',
  dailyMaxCostUsd: 'the daily cost cap (USD)',
  concurrency: 'the number of steps run at once',
  maxSubagents: 'the number of sub-agents run at once',
  maxPlanSteps: 'the most steps a plan may have',
  maxReplans: 'the most re-plans of a run',
  repairBudget: 'the most repairs of a step',
} as const satisfies Partial<Record<keyof Settings, string>>;

/** Budgets and limits raised or taken away: each lets agents spend or do more before anything stops them. */
function capsWidening(current: Settings, patch: SettingsPatch): string[] {
  return (Object.keys(CAPS) as (keyof typeof CAPS)[])
    .filter((cap) => capLoosened(current[cap], patch[cap]))
    .map((cap) => `${CAPS[cap]} from ${capInWords(current[cap])} to ${capInWords(patch[cap] ?? null)}`);
}

/** A model's price as the budget counts it on a paid server: the operator's, else the built-in table's, else unknown. */
const countedPrice = (model: string, prices: Settings['modelPrices']) => priceFor('https://paid.invalid', model, { prices });

/** A price lowered or made unknown makes every cost cap and the daily cost cap count less than is spent. */
function pricesWidening(current: Settings['modelPrices'], next: Settings['modelPrices']): string[] {
  return [...new Set([...Object.keys(current), ...Object.keys(next)])].flatMap((model) => {
    const before = countedPrice(model, current);
    const after = countedPrice(model, next);
    const lowered = after.inputPerMillion < before.inputPerMillion || after.outputPerMillion < before.outputPerMillion;
    if (before.known && !after.known) return [`the price of ${model} removed (its cost no longer counted)`];
    return before.known && lowered ? [`the price of ${model} lowered to ${after.inputPerMillion}/${after.outputPerMillion} USD per million tokens`] : [];
  });
}

/** What the page could send every later run's prompts (and the Dreamer's) to. */
function modelServerWidening(current: Settings, patch: SettingsPatch): string[] {
  return otherModelServer(current.modelUrl, patch.modelUrl) ? [`every run's model server from ${current.modelUrl} to ${patch.modelUrl}`] : [];
}

/** Another server could be anyone's; the built-in engine is a process of Archon's own on this machine. */
function otherModelServer(current: string, next: string | undefined): next is string {
  return next !== undefined && next !== current && !isBuiltinModelUrl(next);
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
  if (patch.modelPrices) changes.push(...pricesWidening(current.modelPrices, patch.modelPrices));
  if (patch.cluster && (patch.cluster.ingress !== current.cluster?.ingress || patch.cluster.admin !== current.cluster?.admin)) changes.push(`built-in tool calls sent to the workers of the Restate cluster at ${patch.cluster.ingress}`);
  return [...changes, ...modelServerWidening(current, patch), ...capsWidening(current, patch)];
}

export type RunDefaults = Pick<RunOptions, 'workspace' | 'policy' | 'modelUrl' | 'maxTokens' | 'maxCostUsd' | 'concurrency'>;

/** The ways a run started from the UI would go beyond the operator's defaults: another workspace or model server, a looser policy, a budget or limit raised or taken away. */
export function runWidening(defaults: RunDefaults, input: Pick<StartRunInput, 'workspace' | 'policy' | 'modelUrl' | 'maxTokens' | 'maxCostUsd' | 'concurrency'>): string[] {
  const changes: string[] = [];
  if (input.workspace !== undefined && !insideFolder(defaults.workspace, input.workspace)) changes.push(`workspace ${real(input.workspace)} instead of ${defaults.workspace}`);
  if (input.policy && looser(defaults.policy, input.policy)) changes.push(`policy ${input.policy}, looser than ${defaults.policy}`);
  if (otherModelServer(defaults.modelUrl, input.modelUrl)) changes.push(`model server ${input.modelUrl} instead of ${defaults.modelUrl}`);
  if (capLoosened(defaults.maxTokens, input.maxTokens)) changes.push(`token cap ${capInWords(input.maxTokens ?? null)} instead of ${capInWords(defaults.maxTokens)}`);
  if (capLoosened(defaults.maxCostUsd, input.maxCostUsd)) changes.push(`cost cap (USD) ${capInWords(input.maxCostUsd ?? null)} instead of ${capInWords(defaults.maxCostUsd)}`);
  if (capLoosened(defaults.concurrency, input.concurrency)) changes.push(`${capInWords(input.concurrency ?? null)} steps at once instead of ${capInWords(defaults.concurrency)}`);
  return changes;
}

/** A schedule's runs go beyond the defaults as a run would, and more when a rule says yes to every approval nobody is there to answer. */
export function scheduleWidening(defaults: RunDefaults, schedule: Schedule): string[] {
  const changes = runWidening(defaults, schedule.options);
  if (schedule.approve === 'auto') changes.push(`every approval its runs ask answered yes, on the cron "${schedule.cron}", with nobody at the desk`);
  return changes;
}

/** Every request from the page that could let agents do more, in one place: the question for the operator and the changes it would make (none: nothing to ask). */
export type WideningRequest =
  | { kind: 'settings'; current: Settings; patch: SettingsPatch }
  | { kind: 'run'; defaults: RunDefaults; input: StartRunInput }
  | { kind: 'schedule'; defaults: RunDefaults; schedule: Schedule }
  | { kind: 'mcp-test'; current: Settings; name: string; config: McpServerConfig };

export function wideningOf(request: WideningRequest): { title: string; changes: string[] } {
  switch (request.kind) {
    case 'settings':
      return { title: 'Change settings so that agents may do more?', changes: settingsWidening(request.current, request.patch) };
    case 'run':
      return { title: 'Start a run that may do more than your defaults allow?', changes: runWidening(request.defaults, request.input) };
    case 'schedule':
      return { title: 'Keep a schedule whose runs may do more than your defaults allow?', changes: scheduleWidening(request.defaults, request.schedule) };
    case 'mcp-test':
      return { title: 'Start an MCP server you have not allowed?', changes: mcpProbeWidening(request.current, request.name, request.config) };
  }
}
