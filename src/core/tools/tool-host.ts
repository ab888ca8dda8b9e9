import { realpathSync, statSync } from 'node:fs';
import { ArchonError } from '../../shared/errors';
import type { RunOptions } from '../../shared/schemas/run';
import type { Settings } from '../../shared/schemas/settings';
import type { Log } from '../log';
import type { ProcessLauncher } from '../process/process-launcher';
import { builtinTools } from './builtin-tools';
import type { ToolRegistry } from './tool-registry';
import { ToolWorkerPool } from './tool-worker-pool';

export interface ToolHostOptions {
  launcher: ProcessLauncher;
  /** The built executor (out/node/executor.js). */
  entry: string;
  /** Folders a tool process may read besides its workspace (Archon's own files); null where the permission model cannot apply. */
  readableRoots: string[] | null;
  /** Folders no command may see even when they lie in the workspace: the home folder, the data dir, the audit key folder. */
  hiddenFolders: string[];
  settings: Pick<Settings, 'networkTools' | 'disabledTools' | 'sandbox' | 'allowNetwork'>;
  log?: Log;
}

function workspaceFolder(path: string): string {
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

/** One run's tools: a worker pool for its workspace, started with the run and closed with it. */
export class ToolHost {
  private pool: ToolWorkerPool | null = null;

  constructor(private readonly options: ToolHostOptions) {}

  registry(runOptions: RunOptions): ToolRegistry {
    this.pool ??= new ToolWorkerPool({
      launcher: this.options.launcher,
      entry: this.options.entry,
      workspace: workspaceFolder(runOptions.workspace),
      networkTools: this.options.settings.networkTools,
      confinement: { mode: this.options.settings.sandbox, allowNetwork: this.options.settings.allowNetwork, hidden: this.options.hiddenFolders.map(realPathIfAny) },
      readableRoots: this.options.readableRoots,
      log: this.options.log,
    });
    this.pool.warmUp();
    return builtinTools(this.pool, this.options.settings);
  }

  async stopAll(): Promise<void> {
    await this.pool?.stopAll();
  }

  async close(): Promise<void> {
    await this.pool?.close();
  }
}
