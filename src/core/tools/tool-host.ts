import { realpathSync, statSync } from 'node:fs';
import { ArchonError } from '../../shared/errors';
import type { RunOptions } from '../../shared/schemas/run';
import type { Settings } from '../../shared/schemas/settings';
import type { Log } from '../log';
import { mcpToolset } from '../mcp/mcp-toolset';
import type { McpSessions } from '../mcp/mcp-sessions';
import type { McpSecrets } from '../secrets/mcp-secrets';
import type { ToolDefinitionStore } from '../store/tool-definitions';
import type { ProcessLauncher } from '../process/process-launcher';
import { RemoteToolCaller } from '../restate/remote-tools';
import { checkClusterForRun } from '../restate/cluster-stop';
import { clusterSecret, RestateCluster } from '../restate/restate-cluster';
import { builtinTools } from './builtin-tools';
import { ToolRegistry, type ToolNotice } from './tool-registry';
import { SHARED_CALLS_PER_WORKER, toolWorkerCap, ToolWorkerPool, type ToolWorkerStats } from './tool-worker-pool';

export interface ToolHostOptions {
  launcher: ProcessLauncher;
  /** The built executor (out/node/executor.js). */
  entry: string;
  /** Folders a tool process may read besides its workspace (Archon's own files); null where the permission model cannot apply. */
  readableRoots: string[] | null;
  /** Folders no command may see even when they lie in the workspace: the home folder, the data dir, the audit key folder. */
  hiddenFolders: string[];
  settings: Pick<Settings, 'networkTools' | 'disabledTools' | 'sandbox' | 'allowNetwork' | 'mcpServers'> & Partial<Pick<Settings, 'toolWorkers'>>;
  /** MCP: the process's sessions, where tool definitions are recorded, and the servers' secrets; without them no MCP server is used. */
  mcp?: { sessions: McpSessions; definitions: ToolDefinitionStore; secrets: McpSecrets; now?: () => Date };
  log?: Log;
}

/** The workspace by its real path; one that is not an existing folder is refused, saying what to pass. */
export function workspaceFolder(path: string): string {
  try {
    if (statSync(path).isDirectory()) return realpathSync(path);
  } catch {
    // Reported below.
  }
  throw new ArchonError('CONFIG_INVALID', `The workspace ${path} is not an existing folder. Pass --workspace (or choose one in the app) with the folder the tools may use.`);
}

/** The sandbox compares real paths (the tool process may not resolve paths outside its workspace itself). */
function realPathIfAny(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** The tool processes for one workspace, confined as Settings say. */
export function toolWorkerPool(options: Omit<ToolHostOptions, 'mcp'>, workspace: string): ToolWorkerPool {
  return new ToolWorkerPool({
    launcher: options.launcher,
    entry: options.entry,
    workspace,
    networkTools: options.settings.networkTools,
    confinement: { mode: options.settings.sandbox, allowNetwork: options.settings.allowNetwork, hidden: options.hiddenFolders.map(realPathIfAny) },
    readableRoots: options.readableRoots,
    maxWorkers: toolWorkerCap(options.settings.toolWorkers),
    log: options.log,
  });
}

/** One run's tools: a worker pool for its workspace (or the workers of its Restate cluster), started with the run and closed with it. */
export class ToolHost {
  private pool: ToolWorkerPool | null = null;
  private remote: RemoteToolCaller | null = null;

  constructor(private readonly options: ToolHostOptions) {}

  /** The run's tools: the built-ins, and the tools of every enabled MCP server that starts (one that does not is a notice). */
  async registry(runOptions: RunOptions, signal: AbortSignal = new AbortController().signal): Promise<ToolRegistry> {
    const workspace = workspaceFolder(runOptions.workspace);
    if (runOptions.cluster) await checkClusterForRun(new RestateCluster(runOptions.cluster), signal);
    const builtins = this.builtins(workspace, runOptions.cluster);
    const { mcp, settings, hiddenFolders } = this.options;
    if (!mcp || Object.keys(settings.mcpServers).length === 0) return builtins;
    const servers: Settings['mcpServers'] = {};
    const unopened: ToolNotice[] = [];
    for (const [name, config] of Object.entries(settings.mcpServers).filter(([, config]) => !config.disabled)) {
      const opened = mcp.secrets.open(name, config);
      if (opened.ok) servers[name] = opened.config;
      else unopened.push({ type: 'mcp.server_failed', server: name, ...opened.failure });
    }
    const { tools, notices } = await mcpToolset({
      servers,
      sessions: mcp.sessions,
      definitions: mcp.definitions,
      confinement: { workspace, sandbox: settings.sandbox, allowNetwork: settings.allowNetwork, hidden: hiddenFolders },
      disabledTools: settings.disabledTools,
      reservedNames: builtins.names(),
      now: mcp.now ?? (() => new Date()),
      signal,
    });
    return new ToolRegistry([...builtins.names().flatMap((name) => builtins.get(name) ?? []), ...tools], [...unopened, ...notices]);
  }

  private builtins(workspace: string, cluster: RunOptions['cluster']): ToolRegistry {
    if (cluster) {
      this.remote ??= new RemoteToolCaller(new RestateCluster(cluster), clusterSecret(cluster.secretFile, workspace));
      return builtinTools(this.remote, this.options.settings);
    }
    this.pool ??= toolWorkerPool(this.options, workspace);
    this.pool.warmUp();
    return builtinTools(this.pool, this.options.settings);
  }

  /**
   * Starts tool workers for `count` read-only calls at once (SHARED_CALLS_PER_WORKER to a worker; capped by
   * Settings.toolWorkers or the cores) before they are needed; the run's stop ends it. A call with side
   * effects takes a worker of its own, an idle one or one started for it (under `balanced` it waits for a person anyway).
   */
  warm(count: number, signal: AbortSignal): void {
    this.pool?.warmTo(Math.ceil(count / SHARED_CALLS_PER_WORKER), signal);
  }

  /** Tool workers running now, by kind, and how many are ready. */
  workers(): ToolWorkerStats {
    return this.pool?.stats() ?? { plain: 0, command: 0, ready: 0 };
  }

  /** The emergency stop: this run's tool processes. MCP servers outlive runs, so their sessions' owner (the process) kills them on the stop, idle ones too. */
  async stopAll(): Promise<void> {
    await (this.remote ? this.remote.stopAll() : this.pool?.stopAll());
  }

  async close(): Promise<void> {
    await this.pool?.close();
  }
}
