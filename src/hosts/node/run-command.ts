import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ArchonError } from '../../shared/errors';
import { isBuiltinModelUrl, resolveModelUrl } from '../../shared/model-presets';
import { isModelPath } from '../../core/models/model-library';
import type { RunOptions } from '../../shared/schemas/run';
import type { Settings } from '../../shared/schemas/settings';
import type { RunResult } from '../../core/agent/run-engine';
import { launchRun } from '../../core/agent/run-launcher';
import { composeRunServices } from '../../core/composition';
import { runOptionsFrom } from '../../core/run/run-options';
import { asStoreError } from '../../core/store/open-database';
import { commandLineApiKeys } from '../../core/secrets/api-key-source';
import { readRolesFile } from '../../core/roles/roles-file';
import type { StoredRole } from '../../shared/schemas/roles';
import type { ArchonRuntime } from '../../core/runtime';
import { childProcessLauncher } from '../../core/process/child-process-launcher';
import type { UndoWorkers } from '../../core/tools/file-restorer';
import { readMcpConfigFile } from '../../core/mcp/mcp-config-file';
import { foldersHiddenFromTools, refuseWorkspaceInArchon } from '../../core/tools/hidden-folders';
import { confirmWorkspace } from '../../core/tools/workspace-pin';
import { terminalConfirmation } from './terminal-confirmation';
import { approvalChannelFor } from './terminal-approvals';
import { terminalText } from './terminal-text';
import { longCallProgress } from './long-call-progress';
import { BUDGET_PRESETS, RESTATE_DEFAULTS, type RunFlags } from './command-flags';
import { engineLauncher } from './engine-launcher';
import { describeEvent } from '../../shared/event-lines';
import { EXIT_BY_STATUS } from './run-output';

/** Events as JSON lines on stdout, or as progress on stderr (with a spinner for long calls when stderr is a terminal). */
function printEvents(runtime: ArchonRuntime, json: boolean): () => void {
  const progress = !json && process.stderr.isTTY ? longCallProgress(process.stderr) : null;
  const unsubscribe = runtime.bus.subscribe((event) => {
    if (!('runId' in event)) return;
    if (json) process.stdout.write(`${JSON.stringify(event)}\n`);
    else {
      progress?.seen(event);
      const line = describeEvent(event);
      if (line) process.stderr.write(`${terminalText(line)}\n`);
    }
  });
  return () => {
    unsubscribe();
    progress?.stop();
  };
}

/** `--engine`: restate names the cluster (given, else Restate's defaults) and its secret; local takes a resumed run back to this machine. */
function clusterOf(flags: RunFlags): RunOptions['cluster'] {
  const restateFlags = flags.restateIngress !== undefined || flags.restateAdmin !== undefined || flags.clusterSecretFile !== undefined;
  if (restateFlags && flags.engine !== 'restate') throw new ArchonError('CONFIG_INVALID', '--restate-ingress, --restate-admin and --cluster-secret-file go with --engine restate: add it (see docs/scale-out.md).');
  if (flags.engine === 'local') return null;
  if (flags.engine !== 'restate') return undefined;
  if (!flags.clusterSecretFile) throw new ArchonError('CONFIG_INVALID', '--engine restate needs --cluster-secret-file: the file of the secret its workers check each call against (see docs/scale-out.md).');
  return { ingress: flags.restateIngress ?? RESTATE_DEFAULTS.ingress, admin: flags.restateAdmin ?? RESTATE_DEFAULTS.admin, secretFile: resolve(flags.clusterSecretFile) };
}

/**
 * What the operator typed, as run options (nothing for a flag not given). A budget preset gives the
 * run's token cap unless --max-tokens does. For a new run these win over Settings; for a resumed run,
 * over its own stored options.
 */
export function givenRunOptions(flags: RunFlags, roles?: Record<string, StoredRole>): Partial<RunOptions> {
  const modelUrl = flags.modelUrl === undefined ? undefined : resolveModelUrl(flags.modelUrl);
  const given: Partial<RunOptions> = {
    modelUrl,
    // The built-in engine's model file, as a whole path: the run (and its resume) may be elsewhere than this shell.
    model: flags.model !== undefined && modelUrl !== undefined && isBuiltinModelUrl(modelUrl) && isModelPath(flags.model) ? resolve(flags.model) : flags.model,
    policy: flags.policy,
    concurrency: flags.concurrency,
    maxTokens: flags.maxTokens ?? (flags.budgetPreset ? BUDGET_PRESETS[flags.budgetPreset].maxTokens : undefined),
    maxCostUsd: flags.maxCost,
    maxIterations: flags.maxIterations,
    maxPlanSteps: flags.maxSteps,
    verification: flags.verify,
    acceptGaps: flags.acceptGaps,
    workspace: flags.workspace === undefined ? undefined : resolve(flags.workspace),
    memory: flags.memory === false ? false : undefined,
    embeddingModel: flags.embeddingModel,
    roles,
    cluster: clusterOf(flags),
  };
  return Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
}

/** A new run's options from the command line: each flag given, else Settings, else the defaults. */
export function runOptionsFromFlags(settings: Settings, flags: RunFlags, roles?: Record<string, StoredRole>): RunOptions {
  return runOptionsFrom(settings, givenRunOptions(flags, roles));
}

/** The built executor beside this CLI bundle (out/node/executor.js), and the folder it runs from. */
export const EXECUTOR_ENTRY = fileURLToPath(new URL('./executor.js', import.meta.url));
export const APP_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** This host's tool processes: the built executor, reading Archon's own files, never the folders hidden from tools. */
export function nodeWorkers(runtime: ArchonRuntime): UndoWorkers {
  return { launcher: childProcessLauncher, entry: EXECUTOR_ENTRY, readableRoots: [APP_ROOT], hiddenFolders: foldersHiddenFromTools(runtime.dataDir) };
}

/** The model server the run talks to: the one the command line's key is for. */
function runModelUrl(runtime: ArchonRuntime, settings: Settings, flags: RunFlags, what: { goal: string } | { resume: string }): string | undefined {
  if (flags.modelUrl !== undefined) return resolveModelUrl(flags.modelUrl);
  return 'goal' in what ? resolveModelUrl(settings.modelUrl) : runtime.store.runs.getRun(what.resume)?.options.modelUrl;
}

/** What a run or resume ended as, or how it could not start, as the brief's exit code. */
function exitCodeFor(error: unknown): number | null {
  const typed = ArchonError.isInstance(error) ? error : asStoreError(error);
  if (typed?.code === 'MODEL_UNAVAILABLE' || typed?.code === 'DISK_FULL' || typed?.code === 'STORE_LOCKED') return EXIT_BY_STATUS.paused ?? 6;
  return null;
}

/**
 * Runs a goal (or resumes a run) in this process; returns the exit code of the brief. SIGINT and
 * SIGTERM are an emergency stop; so is `archon estop` from another process (noticed by polling).
 */
export async function runFromCli(runtime: ArchonRuntime, flags: RunFlags, what: { goal: string; followUpOf?: string } | { resume: string }): Promise<number> {
  const stored = runtime.store.settingsForRun();
  const settings = flags.mcpConfig ? { ...stored, mcpServers: { ...stored.mcpServers, ...readMcpConfigFile(flags.mcpConfig) } } : stored;
  const roleFile = flags.roles ? readRolesFile(flags.roles) : null;
  // Each key is kept in memory for its own server's origin, redacted everywhere; a server without one of its own gets none.
  const keys = commandLineApiKeys(flags, runtime.store.secrets, runModelUrl(runtime, settings, flags, what));
  for (const { url, apiKey: key } of roleFile?.keys ?? []) keys.remember(url, key);
  const services = composeRunServices({ runtime, workers: nodeWorkers(runtime), apiKeyFor: (url) => keys.keyFor(url), settings: () => settings, allowNetwork: flags.allowNetwork, engineLauncher: engineLauncher() });
  const { estop } = services;
  const controller = new AbortController();
  const stop = (signal: NodeJS.Signals) => void estop.trigger('signal', `${signal} received by archon run`);
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const unsubscribe = printEvents(runtime, flags.json ?? false);
  try {
    const given = givenRunOptions(flags, roleFile?.roles);
    const target = 'goal' in what ? { goal: what.goal, options: runOptionsFrom(settings, { ...given, followUpOf: what.followUpOf }) } : { resume: what.resume, overrides: given };
    const workspace = 'goal' in what ? target.options?.workspace : given.workspace;
    if (workspace !== undefined) refuseWorkspaceInArchon(workspace, runtime.dataDir);
    if ('resume' in what && workspace === undefined) await confirmWorkspace(runtime.store.runs, what.resume, 'resume', terminalConfirmation({ trustUi: false }), controller.signal);
    const launch = {
      runtime,
      settings,
      approvals: approvalChannelFor(flags.approve),
      estop,
      tools: services.toolHost(settings),
      connect: services.connect,
      capabilities: services.capabilities,
      dayMaxTokens: flags.budgetPreset ? BUDGET_PRESETS[flags.budgetPreset].dayMaxTokens : undefined,
      price: flags.price,
    };
    const result: RunResult = await launchRun(launch, target, controller.signal);
    if ((result.status === 'completed' || result.status === 'completed_with_gaps') && !flags.json) process.stdout.write(`${terminalText(result.answer ?? '')}\n`);
    return EXIT_BY_STATUS[result.status] ?? 1;
  } catch (error) {
    const code = exitCodeFor(error);
    if (code === null) throw error;
    process.stderr.write(`archon: ${terminalText((ArchonError.isInstance(error) ? error : asStoreError(error))?.message ?? String(error))}\n`);
    return code;
  } finally {
    await services.close();
    runtime.events.flush();
    unsubscribe();
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}
