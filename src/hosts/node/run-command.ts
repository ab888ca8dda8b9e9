import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ArchonError, describeZodError } from '../../shared/errors';
import { describeGapTrend } from '../../shared/gap-trend';
import { endpointSummary } from '../../shared/endpoint-summary';
import { resolveModelUrl } from '../../shared/model-presets';
import type { ArchonEvent } from '../../shared/schemas/events';
import { RunOptionsSchema, type RunOptions, type RunStatus } from '../../shared/schemas/run';
import type { RunResult } from '../../core/agent/run-engine';
import { launchRun } from '../../core/agent/run-launcher';
import { retryPolicyFrom } from '../../core/model/retry-policy';
import { asStoreError } from '../../core/store/open-database';
import { modelConnector } from '../../core/model/connect';
import { apiKeyFromCommandLine } from '../../core/secrets/api-key-source';
import { ApiKeys } from '../../core/secrets/api-keys';
import { readRolesFile } from '../../core/roles/roles-file';
import type { StoredRole } from '../../shared/schemas/roles';
import { EmergencyStop } from '../../core/stop/emergency-stop';
import type { ArchonRuntime } from '../../core/runtime';
import { childProcessLauncher } from '../../core/process/child-process-launcher';
import { ToolHost } from '../../core/tools/tool-host';
import { readMcpConfigFile } from '../../core/mcp/mcp-config-file';
import { MCP_START_TIMEOUT_MS, McpSessions } from '../../core/mcp/mcp-sessions';
import { McpSecrets } from '../../core/secrets/mcp-secrets';
import { foldersHiddenFromTools } from '../../core/tools/hidden-folders';
import { approvalChannelFor } from './terminal-approvals';
import { longCallProgress } from './long-call-progress';
import { BUDGET_PRESETS, type RunFlags } from './command-flags';

const EXIT_BY_STATUS: Partial<Record<RunStatus, number>> = { completed: 0, failed: 1, stopped: 3, budget_exhausted: 4, rejected: 5, paused: 6 };

function describeEvent(event: ArchonEvent): string | null {
  switch (event.type) {
    case 'run.started':
      return `Run ${event.runId}: ${event.goal}`;
    case 'model.probed':
      return `Model ${event.model}: ${endpointSummary(event)}${event.reason ? `\n  why: ${event.reason}` : ''}`;
    case 'model.dialect_detected':
      return `Model writes its tool calls as ${event.dialect}; Archon reads that form for the rest of the run`;
    case 'plan.ready':
      return [`Plan: ${event.plan.steps.length} step(s)`, ...event.plan.steps.map((step) => `  ${step.id}: ${step.description}${step.dependencies.length ? ` (after ${step.dependencies.join(', ')})` : ''}`)].join('\n');
    case 'step.started':
      return `→ ${event.stepId}`;
    case 'tool.completed':
      return `  ${event.tool} [${event.status}] ${event.content.replace(/\s+/g, ' ').slice(0, 120)}`;
    case 'tool.refused':
      return `  ${event.tool} refused: ${event.reason.replace(/\s+/g, ' ').slice(0, 160)}`;
    case 'step.completed':
      return `✓ ${event.stepId}`;
    case 'step.failed':
      return `✗ ${event.stepId}: ${event.reason}`;
    case 'step.skipped':
      return `– ${event.stepId}: ${event.reason}`;
    case 'validation.completed':
      if (event.stepId === null) return event.verdict === 'fail' ? `Plan check: ${event.reasons.join(' ').slice(0, 300)}` : null;
      return `  validation ${event.verdict}${event.confidence === null ? '' : ` (confidence ${event.confidence.toFixed(2)})`}${event.verdict === 'fail' ? `: ${event.reasons.join(' ').slice(0, 200)}` : ''}`;
    case 'plan.revised':
      return `Plan revision ${event.revision}: ${event.replaced.join(', ')} replaced by ${event.added.join(', ')}`;
    case 'goal.progress':
      return `  gap to the goal ${event.gap.toFixed(2)}${event.delta === null ? '' : ` (${event.delta > 0 ? '+' : ''}${event.delta.toFixed(2)})`}`;
    case 'escalation.raised':
      return `! escalation${event.stepId ? ` at ${event.stepId}` : ''}: ${event.reason}; gap trend ${describeGapTrend(event.gapTrend)}`;
    case 'step.retried':
      return `↻ ${event.stepId}: repair ${event.repair}`;
    case 'run.failed':
      return `Run failed: ${event.error}`;
    case 'run.stopped':
      return `Run stopped: ${event.reason}`;
    case 'run.paused':
      return `Run paused: ${event.reason}\n${event.whatToDo}`;
    case 'tool.orphan_killed':
      return `  killed a tool process group (${event.pgid}) a previous process left running`;
    case 'mcp.server_failed':
      return `  MCP server ${event.server} unavailable (${event.kind}): ${event.message}`;
    case 'tool.definition_changed':
      return `  ${event.tool}: its definition changed since it was last seen; earlier approval settings no longer apply, the next call asks`;
    case 'estop.triggered':
      return `Emergency stop (${event.triggeredBy}): ${event.reason}`;
    case 'approval.requested':
      return `? approval (${event.kind}): ${event.summary}`;
    case 'approval.resolved':
      return `  → ${event.status}`;
    case 'policy.tightened':
      return `Policy tightened from ${event.from} to ${event.to}: ${event.reasons.join('; ')}`;
    case 'budget.warning':
      return `Budget: ${event.message}`;
    default:
      return null;
  }
}

/** Events as JSON lines on stdout, or as progress on stderr (with a spinner for long calls when stderr is a terminal). */
function printEvents(runtime: ArchonRuntime, json: boolean): () => void {
  const progress = !json && process.stderr.isTTY ? longCallProgress(process.stderr) : null;
  const unsubscribe = runtime.bus.subscribe((event) => {
    if (!('runId' in event)) return;
    if (json) process.stdout.write(`${JSON.stringify(event)}\n`);
    else {
      progress?.seen(event);
      const line = describeEvent(event);
      if (line) process.stderr.write(`${line}\n`);
    }
  });
  return () => {
    unsubscribe();
    progress?.stop();
  };
}

export function runOptionsFrom(runtime: ArchonRuntime, flags: RunFlags, roles?: Record<string, StoredRole>): RunOptions {
  const settings = runtime.store.getSettings();
  const chosenRoles = roles ?? settings.roles;
  const parsed = RunOptionsSchema.safeParse({
    modelUrl: resolveModelUrl(flags.modelUrl ?? settings.modelUrl),
    model: flags.model ?? settings.model,
    policy: flags.policy ?? settings.policy,
    concurrency: flags.concurrency ?? settings.concurrency,
    maxTokens: flags.maxTokens ?? (flags.budgetPreset ? BUDGET_PRESETS[flags.budgetPreset].maxTokens : null),
    maxCostUsd: flags.maxCost ?? null,
    workspace: resolve(flags.workspace ?? process.cwd()),
    maxIterations: flags.maxIterations ?? 10,
    maxPlanSteps: flags.maxSteps ?? settings.maxPlanSteps,
    verification: flags.verify ?? settings.verification,
    repairBudget: settings.repairBudget,
    maxReplans: settings.maxReplans,
    ...(flags.memory === false ? { memory: false } : {}),
    embeddingModel: flags.embeddingModel ?? settings.embeddingModel,
    ...(Object.keys(chosenRoles).length > 0 ? { roles: chosenRoles } : {}),
  });
  if (!parsed.success) throw new ArchonError('CONFIG_INVALID', `Invalid run settings: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

/** Only what the operator typed overrides a resumed run's own settings. */
function overridesFrom(flags: RunFlags, roles?: Record<string, StoredRole>): Partial<RunOptions> {
  const overrides: Partial<RunOptions> = roles ? { roles } : {};
  if (flags.modelUrl) overrides.modelUrl = resolveModelUrl(flags.modelUrl);
  if (flags.model) overrides.model = flags.model;
  if (flags.policy) overrides.policy = flags.policy;
  if (flags.concurrency) overrides.concurrency = flags.concurrency;
  if (flags.maxTokens) overrides.maxTokens = flags.maxTokens;
  if (flags.maxCost) overrides.maxCostUsd = flags.maxCost;
  if (flags.maxIterations) overrides.maxIterations = flags.maxIterations;
  if (flags.maxSteps) overrides.maxPlanSteps = flags.maxSteps;
  if (flags.verify) overrides.verification = flags.verify;
  if (flags.workspace) overrides.workspace = resolve(flags.workspace);
  if (flags.memory === false) overrides.memory = false;
  if (flags.embeddingModel) overrides.embeddingModel = flags.embeddingModel;
  return overrides;
}

/** The built executor beside this CLI bundle (out/node/executor.js), and the folder it runs from. */
export const EXECUTOR_ENTRY = fileURLToPath(new URL('./executor.js', import.meta.url));
export const APP_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** What a run or resume ended as, or how it could not start, as the brief's exit code. */
function exitCodeFor(error: unknown): number | null {
  const typed = ArchonError.isInstance(error) ? error : asStoreError(error);
  if (typed?.code === 'MODEL_UNAVAILABLE' || typed?.code === 'DISK_FULL') return EXIT_BY_STATUS.paused ?? 6;
  return null;
}

/**
 * Runs a goal (or resumes a run) in this process; returns the exit code of the brief. SIGINT and
 * SIGTERM are an emergency stop; so is `archon estop` from another process (noticed by polling).
 */
export async function runFromCli(runtime: ArchonRuntime, flags: RunFlags, what: { goal: string; followUpOf?: string } | { resume: string }): Promise<number> {
  const stored = runtime.store.settingsForRun();
  const settings = flags.mcpConfig ? { ...stored, mcpServers: { ...stored.mcpServers, ...readMcpConfigFile(flags.mcpConfig) } } : stored;
  const apiKey = apiKeyFromCommandLine(flags, runtime.store.secrets);
  const roleFile = flags.roles ? readRolesFile(flags.roles) : null;
  // A role's key is kept in memory for its server's origin, redacted everywhere; any other server gets the run's key.
  const roleKeys = new ApiKeys(runtime.store.secrets);
  for (const { url, apiKey: key } of roleFile?.keys ?? []) roleKeys.remember(url, key);
  const mcpSessions = new McpSessions(MCP_START_TIMEOUT_MS, runtime.log);
  const controller = new AbortController();
  const estop = new EmergencyStop(runtime.store, runtime.bus, runtime.now);
  const tools = new ToolHost({
    launcher: childProcessLauncher,
    entry: EXECUTOR_ENTRY,
    readableRoots: [APP_ROOT],
    hiddenFolders: foldersHiddenFromTools(runtime.dataDir),
    settings: { ...settings, allowNetwork: flags.allowNetwork ?? settings.allowNetwork },
    mcp: { sessions: mcpSessions, definitions: runtime.store.toolDefinitions, secrets: new McpSecrets(null, runtime.store.secrets), now: runtime.now },
    log: runtime.log,
  });
  const unwatch = estop.watch();
  const unhookMcp = estop.onStop(() => mcpSessions.stopAll());
  const stop = (signal: NodeJS.Signals) => void estop.trigger('signal', `${signal} received by archon run`);
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const unsubscribe = printEvents(runtime, flags.json ?? false);
  try {
    const launch = {
      runtime,
      settings,
      approvals: approvalChannelFor(flags.approve),
      estop,
      tools,
      connect: modelConnector({ apiKeyFor: (url) => roleKeys.keyFor(url) ?? apiKey, retry: retryPolicyFrom(settings), contextLength: () => settings.contextLength }),
      dayMaxTokens: flags.budgetPreset ? BUDGET_PRESETS[flags.budgetPreset].dayMaxTokens : undefined,
      price: flags.price,
    };
    const target = 'goal' in what ? { goal: what.goal, options: { ...runOptionsFrom(runtime, flags, roleFile?.roles), ...(what.followUpOf ? { followUpOf: what.followUpOf } : {}) } } : { resume: what.resume, overrides: overridesFrom(flags, roleFile?.roles) };
    const result: RunResult = await launchRun(launch, target, controller.signal);
    if (result.status === 'completed' && !flags.json) process.stdout.write(`${result.answer ?? ''}\n`);
    return EXIT_BY_STATUS[result.status] ?? 1;
  } catch (error) {
    const code = exitCodeFor(error);
    if (code === null) throw error;
    process.stderr.write(`archon: ${(ArchonError.isInstance(error) ? error : asStoreError(error))?.message ?? String(error)}\n`);
    return code;
  } finally {
    unhookMcp();
    await mcpSessions.close();
    unwatch();
    runtime.events.flush();
    unsubscribe();
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}
