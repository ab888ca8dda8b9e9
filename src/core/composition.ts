import type { RunOptions } from '../shared/schemas/run';
import type { Settings } from '../shared/schemas/settings';
import { runCapabilities } from './capabilities';
import { MCP_START_TIMEOUT_MS, McpSessions } from './mcp/mcp-sessions';
import { BuiltinEngines, type EngineLauncher } from './model/builtin-engine';
import { modelConnector, type Connected, type ConnectSession } from './model/connect';
import { ModelLibrary } from './models/model-library';
import { retryPolicyFrom } from './model/retry-policy';
import type { ArchonRuntime } from './runtime';
import type { SecretVault } from './secrets/api-keys';
import { McpSecrets } from './secrets/mcp-secrets';
import { EmergencyStop } from './stop/emergency-stop';
import type { UndoWorkers } from './tools/file-restorer';
import { ToolHost } from './tools/tool-host';

export interface RunServicesOptions {
  runtime: ArchonRuntime;
  /** Where tool processes come from, what they may read and what they never see. */
  workers: UndoWorkers;
  /** The key sent to a model server, by its URL (each key is bound to one origin). */
  apiKeyFor(url: string): string | undefined;
  /** Settings when a model server is reached: the app reads them afresh, a CLI run keeps those it started with. */
  settings(): Settings;
  /** The host was started with the network on for sandboxed commands (`--allow-network`); else Settings say. */
  allowNetwork?: boolean;
  /** The OS keychain MCP servers' secrets are sealed with; without one they cannot be saved in Settings. */
  vault?: SecretVault | null;
  /** How this host starts the built-in engine's process (`--model-url builtin`); without it such runs are refused. */
  engineLauncher?: EngineLauncher;
  /** The models the built-in engine runs by name (the host's own when it has one). */
  library?: ModelLibrary;
}

/** What every host runs runs with: the emergency stop, MCP servers, tool processes and model servers (the built-in engine among them). */
export interface RunServices {
  estop: EmergencyStop;
  mcpSecrets: McpSecrets;
  connect: (options: RunOptions, signal: AbortSignal, session?: ConnectSession) => Promise<Connected>;
  /** A run's own tool host over the process's MCP sessions. */
  toolHost: (settings: Settings) => ToolHost;
  allowNetwork: (settings: Pick<Settings, 'allowNetwork'>) => boolean;
  /** The capabilities of a run with these options: memory, validation, sub-agents, recovery, conflicts. */
  capabilities: typeof runCapabilities;
  close: () => Promise<void>;
}

/**
 * Composed once for every host (the app, `archon serve`, `archon run` and `resume`), with the capabilities runs have: the stop watches
 * other processes' stops, and one set of MCP sessions serves the process's runs. Servers outlive a
 * run, so the stop kills them all here (idle ones too), not per run in ToolHost.
 */
export function composeRunServices(options: RunServicesOptions): RunServices {
  const { runtime } = options;
  const estop = new EmergencyStop(runtime.store, runtime.bus, runtime.now);
  const unwatch = estop.watch();
  const mcpSessions = new McpSessions(MCP_START_TIMEOUT_MS, runtime.log);
  const unhookMcp = estop.onStop(() => mcpSessions.stopAll());
  const mcpSecrets = new McpSecrets(options.vault ?? null, runtime.store.secrets);
  const allowNetwork = (settings: Pick<Settings, 'allowNetwork'>) => options.allowNetwork ?? settings.allowNetwork;
  const library = options.library ?? new ModelLibrary(runtime.dataDir);
  const engines = options.engineLauncher ? new BuiltinEngines({ launch: options.engineLauncher, resolveModel: (nameOrPath) => library.resolveModel(nameOrPath), redact: (token) => runtime.store.secrets.add(token) }) : undefined;
  return {
    estop,
    mcpSecrets,
    connect: (runOptions, signal, session) => {
      const settings = options.settings();
      return modelConnector({ apiKeyFor: options.apiKeyFor, retry: retryPolicyFrom(settings), contextLength: () => settings.contextLength, engines })(runOptions, signal, session);
    },
    toolHost: (settings) =>
      new ToolHost({
        ...options.workers,
        settings: { ...settings, allowNetwork: allowNetwork(settings) },
        mcp: { sessions: mcpSessions, definitions: runtime.store.toolDefinitions, secrets: mcpSecrets, now: runtime.now },
        log: runtime.log,
      }),
    allowNetwork,
    capabilities: runCapabilities,
    close: async () => {
      unwatch();
      unhookMcp();
      await Promise.all([engines?.close(), mcpSessions.close()]);
    },
  };
}
