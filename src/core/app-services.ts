import type { CommandHandlers } from '../shared/ipc/dispatch';
import { resolveModelUrl } from '../shared/model-presets';
import { RunOptionsSchema, type RunOptions } from '../shared/schemas/run';
import { RunManager } from './agent/run-manager';
import { PendingApprovals } from './approval/pending-approvals';
import type { OperatorConfirmation } from './authority/operator-authority';
import { createCommandHandlers, type AuditPort } from './command-handlers';
import { modelConnector } from './model/connect';
import { retryPolicyFrom } from './model/retry-policy';
import { probeEndpoint } from './model/endpoint-probe';
import { probeMcpServer } from './mcp/probe-server';
import type { ApiKeys } from './secrets/api-keys';
import type { ProcessLauncher } from './process/process-launcher';
import type { ArchonRuntime } from './runtime';
import { EmergencyStop } from './stop/emergency-stop';
import { ToolHost } from './tools/tool-host';
import { MCP_START_TIMEOUT_MS, McpSessions } from './mcp/mcp-sessions';
import { BackgroundDreamer } from './memory/background-dreamer';
import { giveBackHeap } from './heap';
import { McpSecrets } from './secrets/mcp-secrets';
import type { SecretVault } from './secrets/api-keys';

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
  /** The operator's yes or no outside the renderer: a native dialog in the app, the terminal for `archon serve`. */
  confirmation: OperatorConfirmation;
  /** Folders no command may see (the home folder, the data dir, the audit key folder). */
  hiddenFolders: string[];
  /** The host was started with the network on for sandboxed commands (`archon serve --allow-network`). */
  allowNetwork?: boolean;
  /** Run settings the host was started with (`archon serve --model-url …`), over the stored settings. */
  runDefaults?: Partial<RunOptions>;
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
  const estop = new EmergencyStop(runtime.store, runtime.bus, runtime.now);
  const unwatch = estop.watch();
  // One set of MCP sessions for the process: servers outlive a run, so the emergency stop kills them all here (idle ones too), not per run in ToolHost.
  const mcpSessions = new McpSessions(MCP_START_TIMEOUT_MS, runtime.log);
  const mcpSecrets = new McpSecrets(options.vault ?? null, runtime.store.secrets);
  const unhookMcp = estop.onStop(() => mcpSessions.stopAll());
  const approvals = new PendingApprovals((id) => runtime.store.runs.approvalStatus(id));
  const defaults = (): RunOptions => {
    const settings = runtime.store.getSettings();
    return RunOptionsSchema.parse({
      modelUrl: resolveModelUrl(settings.modelUrl),
      model: settings.model,
      policy: settings.policy,
      concurrency: settings.concurrency,
      maxTokens: null,
      maxCostUsd: null,
      workspace: process.cwd(),
      maxIterations: 10,
      verification: settings.verification,
      repairBudget: settings.repairBudget,
      maxReplans: settings.maxReplans,
      embeddingModel: settings.embeddingModel,
      ...(Object.keys(settings.roles).length > 0 ? { roles: settings.roles } : {}),
      ...options.runDefaults,
    });
  };
  const connect = (runOptions: RunOptions, signal: AbortSignal) =>
    modelConnector({ apiKeyFor: (url) => options.apiKeys.keyFor(url), retry: retryPolicyFrom(runtime.store.getSettings()), contextLength: () => runtime.store.getSettings().contextLength })(runOptions, signal);
  const dreamer = new BackgroundDreamer({
    runtime,
    connect: async (signal) => {
      const { probe, model } = await connect(defaults(), signal);
      return { model, mode: probe.toolCalling ? 'native' : 'text' };
    },
  });
  const manager = new RunManager({
    runtime,
    estop,
    approvals,
    defaults,
    connect,
    toolHost: (settings) =>
      new ToolHost({
        launcher: options.launcher,
        entry: options.executorEntry,
        readableRoots: options.readableRoots,
        hiddenFolders: options.hiddenFolders,
        settings: { ...settings, allowNetwork: options.allowNetwork ?? settings.allowNetwork },
        mcp: { sessions: mcpSessions, definitions: runtime.store.toolDefinitions, secrets: mcpSecrets, now: runtime.now },
        log: runtime.log,
      }),
    onRunEnded: () => dreamer.runEnded(),
    onIdle: giveBackHeap,
  });
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
    undoWorkers: { launcher: options.launcher, entry: options.executorEntry, readableRoots: options.readableRoots, hiddenFolders: options.hiddenFolders },
    probe: (modelUrl, model) => probeEndpoint({ baseUrl: modelUrl, model, apiKey: options.apiKeys.keyFor(modelUrl), contextLength: runtime.store.getSettings().contextLength, signal: AbortSignal.timeout(60_000) }),
    probeMcp: (name, config, signal) => {
      const settings = runtime.store.getSettings();
      const confinement = { workspace: defaults().workspace, sandbox: settings.sandbox, allowNetwork: options.allowNetwork ?? settings.allowNetwork, hidden: options.hiddenFolders };
      return probeMcpServer(name, config, { ...confinement, signal });
    },
    info: { version: options.version, dataDir: runtime.dataDir, host: options.host, hostFlags: Object.keys(options.runDefaults ?? {}) as (keyof RunOptions)[] },
  });
  return {
    estop,
    approvals,
    manager,
    handlers,
    mcpSecrets,
    async close() {
      unwatch();
      await manager.close();
      await dreamer.close();
      unhookMcp();
      await mcpSessions.close();
    },
  };
}
