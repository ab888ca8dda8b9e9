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
import type { ApiKeys } from './secrets/api-keys';
import type { ProcessLauncher } from './process/process-launcher';
import type { ArchonRuntime } from './runtime';
import { EmergencyStop } from './stop/emergency-stop';
import { ToolHost } from './tools/tool-host';

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
  close(): Promise<void>;
}

/** What the app serves over its contract, composed once for Electron main and the headless host alike. */
export function createAppServices(options: AppServicesOptions): AppServices {
  const { runtime } = options;
  const estop = new EmergencyStop(runtime.store, runtime.bus, runtime.now);
  const unwatch = estop.watch();
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
      ...options.runDefaults,
    });
  };
  const manager = new RunManager({
    runtime,
    estop,
    approvals,
    defaults,
    connect: (runOptions, signal) =>
      modelConnector({ apiKeyFor: (url) => options.apiKeys.keyFor(url), retry: retryPolicyFrom(runtime.store.getSettings()), contextLength: () => runtime.store.getSettings().contextLength })(runOptions, signal),
    toolHost: (settings) =>
      new ToolHost({
        launcher: options.launcher,
        entry: options.executorEntry,
        readableRoots: options.readableRoots,
        hiddenFolders: options.hiddenFolders,
        settings: { ...settings, allowNetwork: options.allowNetwork ?? settings.allowNetwork },
        log: runtime.log,
      }),
  });
  const handlers = createCommandHandlers({
    runtime,
    manager,
    estop,
    approvals,
    audit: options.audit,
    apiKeys: options.apiKeys,
    confirmation: options.confirmation,
    runDefaults: defaults,
    probe: (modelUrl, model) => probeEndpoint({ baseUrl: modelUrl, model, apiKey: options.apiKeys.keyFor(modelUrl), contextLength: runtime.store.getSettings().contextLength, signal: AbortSignal.timeout(60_000) }),
    info: { version: options.version, dataDir: runtime.dataDir, host: options.host },
  });
  return {
    estop,
    approvals,
    manager,
    handlers,
    async close() {
      unwatch();
      await manager.close();
    },
  };
}
