import { RESTORE_FILE, type RestoreFileInput } from '../../shared/schemas/file-effect';
import type { ToolResult } from '../../shared/schemas/tool';
import type { ProcessLauncher } from '../process/process-launcher';
import { ToolWorkerPool } from './tool-worker-pool';

/** How undo reaches the files: tool processes like a run's, confined to the run's workspace. */
export interface UndoWorkers {
  launcher: ProcessLauncher;
  entry: string;
  readableRoots: string[] | null;
  hiddenFolders: string[];
}

/** Puts one file back as it was before a run wrote it. */
export type RestoreFile = (input: RestoreFileInput) => Promise<ToolResult>;

/**
 * Lends `use` a tool process of its own that puts files back (`archon.restore_file`, an operation no
 * model is offered), confined to `workspace` like a run's; the runtime never writes workspace files
 * itself. `signal` ends a restore under way: its process is killed.
 */
export async function withFileRestorer<T>(workers: UndoWorkers, workspace: string, signal: AbortSignal, use: (restore: RestoreFile) => Promise<T>): Promise<T> {
  const pool = new ToolWorkerPool({
    launcher: workers.launcher,
    entry: workers.entry,
    workspace,
    networkTools: false,
    confinement: { mode: 'on', allowNetwork: false, hidden: workers.hiddenFolders },
    readableRoots: workers.readableRoots,
    warm: 0,
  });
  try {
    return await use((input) => pool.call(RESTORE_FILE, input, { signal, timeoutMs: 30_000 }));
  } finally {
    await pool.close();
  }
}
