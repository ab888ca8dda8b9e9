import { anySignal } from '../shared/abort';
import type { CommandHandlers } from '../shared/ipc/dispatch';
import type { RunOptions } from '../shared/schemas/run';
import { RunManager } from './agent/run-manager';
import { PendingApprovals } from './approval/pending-approvals';
import type { OperatorConfirmation } from './authority/operator-authority';
import { createCommandHandlers, type AuditPort } from './command-handlers';
import { probeEndpoint } from './model/endpoint-probe';
import { probeMcpServer } from './mcp/probe-server';
import type { ApiKeys } from './secrets/api-keys';
import type { ProcessLauncher } from './process/process-launcher';
import type { ArchonRuntime } from './runtime';
import type { EmergencyStop } from './stop/emergency-stop';
import { BackgroundDreamer } from './memory/background-dreamer';
import { giveBackHeap } from './heap';
import type { McpSecrets } from './secrets/mcp-secrets';
import type { SecretVault } from './secrets/api-keys';
import { composeRunServices } from './composition';
import type { EngineLauncher } from './model/builtin-engine';
import { runOptionsFrom } from './run/run-options';
import { ModelDownloads } from './models/model-downloads';
import { ModelLibrary } from './models/model-library';
import { isBuiltinModelUrl } from '../shared/model-presets';

export interface AppServicesOptions {
  runtime: ArchonRuntime;
  host: 'electron' | 'headless';
  version: string;
  audit: AuditPort;
  launcher: ProcessLauncher;
  executorEntry: string;
  readableRoots: string[] | null;
  /** Keys for model servers, each sent only to the origin it was given for. */
  apiKeys: ApiKeys;
  /** The OS keychain (the app's safeStorage): MCP servers' env and headers are kept sealed by it; without one they cannot be saved in Settings. */
  vault?: SecretVault | null;
  /** Why keys cannot be sealed here (no keychain, or Linux with no keyring), for Settings to say; null when they are. */
  keyStorageNote?: string | null;
  /** The operator's yes or no outside the renderer: a native dialog in the app, the terminal for `archon serve`. */
  confirmation: OperatorConfirmation;
  /** Folders no command may see (the home folder, the data dir, the audit key folder). */
  hiddenFolders: string[];
  /** The host was started with the network on for sandboxed commands (`archon serve --allow-network`). */
  allowNetwork?: boolean;
  /** Run settings the host was started with (`archon serve --model-url …`), over the stored settings. */
  runDefaults?: Partial<RunOptions>;
  /** How this host starts the built-in engine's process (`builtin` as the model URL). */
  engineLauncher?: EngineLauncher;
}

export interface AppServices {
  estop: EmergencyStop;
  approvals: PendingApprovals;
  manager: RunManager;
  handlers: CommandHandlers;
  /** MCP servers' secrets: open a configuration (`open(name, config)`) before probing it with `probeMcpServer`. */
  mcpSecrets: McpSecrets;
  close(): Promise<void>;
}

/** What the app serves over its contract, composed once for Electron main and the headless host alike. */
export function createAppServices(options: AppServicesOptions): AppServices {
  const { runtime } = options;
  const workers = { launcher: options.launcher, entry: options.executorEntry, readableRoots: options.readableRoots, hiddenFolders: options.hiddenFolders };
  const library = new ModelLibrary(runtime.dataDir);
  const services = composeRunServices({ runtime, workers, apiKeyFor: (url) => options.apiKeys.keyFor(url), settings: () => runtime.store.getSettings(), allowNetwork: options.allowNetwork, vault: options.vault, engineLauncher: options.engineLauncher, library });
  const { estop, mcpSecrets, connect } = services;
  const approvals = new PendingApprovals((id) => runtime.store.runs.approvalStatus(id), options.host === 'electron' ? 'app' : 'page');
  const defaults = (): RunOptions => runOptionsFrom(runtime.store.getSettings(), options.runDefaults);
  const dreamer = new BackgroundDreamer({ runtime, estop, approvals, connect, options: defaults });
  const manager = new RunManager({
    runtime,
    estop,
    approvals,
    defaults,
    connect,
    capabilities: services.capabilities,
    toolHost: services.toolHost,
    onRunEnded: () => dreamer.runEnded(),
    onIdle: giveBackHeap,
  });
  const downloads = new ModelDownloads(library);
  const handlers = createCommandHandlers({
    runtime,
    manager,
    estop,
    approvals,
    audit: options.audit,
    apiKeys: options.apiKeys,
    mcpSecrets,
    confirmation: options.confirmation,
    runDefaults: defaults,
    undoWorkers: workers,
    models: { library, downloads },
    // The built-in engine has no server to probe until it runs: it is started (as a run would) and probed where it listens.
    probe: async (modelUrl, model, signal) =>
      isBuiltinModelUrl(modelUrl)
        ? (await connect({ ...defaults(), modelUrl, model: model ?? '' }, signal)).probe
        : probeEndpoint({ baseUrl: modelUrl, model, apiKey: options.apiKeys.keyFor(modelUrl), contextLength: runtime.store.getSettings().contextLength, signal: anySignal(signal, AbortSignal.timeout(60_000)) }),
    probeMcp: (name, config, signal) => {
      const settings = runtime.store.getSettings();
      const confinement = { workspace: defaults().workspace, sandbox: settings.sandbox, allowNetwork: services.allowNetwork(settings), hidden: options.hiddenFolders };
      return probeMcpServer(name, config, { ...confinement, signal });
    },
    info: { version: options.version, dataDir: runtime.dataDir, host: options.host, hostFlags: Object.keys(options.runDefaults ?? {}) as (keyof RunOptions)[], keyStorageNote: options.keyStorageNote ?? null },
  });
  return {
    estop,
    approvals,
    manager,
    handlers,
    mcpSecrets,
    async close() {
      await manager.close();
      await dreamer.close();
      await downloads.close();
      await services.close();
    },
  };
}
