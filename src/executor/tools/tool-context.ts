import type { Confinement } from '../../shared/executor-protocol';
import type { ToolResult } from '../../shared/schemas/tool';
import type { Workspace } from '../workspace-paths';

export interface ExecutorContext {
  workspace: string;
  signal: AbortSignal;
  networkTools: boolean;
  timeoutMs: number;
  confinement: Confinement;
  /** Reports a process group the call started (and the sandbox's init, once known), so the runtime can kill it and wait for it. */
  onSpawn(spawned: { pgid: number; sandboxPid?: number }): void;
}

/** The workspace a file tool may touch, less the folders kept from every tool. */
export function workspaceOf(context: ExecutorContext): Workspace {
  return { path: context.workspace, hidden: context.confinement.hidden };
}

export function result(status: ToolResult['status'], content: string, metadata: Record<string, unknown> = {}): ToolResult {
  return { status, content, metadata };
}
