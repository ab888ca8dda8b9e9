import type { ToolResult } from '../../shared/schemas/tool';

export interface ExecutorContext {
  workspace: string;
  signal: AbortSignal;
  networkTools: boolean;
  timeoutMs: number;
  /** Reports a process group the call started, so the runtime can kill it. */
  onSpawn(pgid: number): void;
}

export function result(status: ToolResult['status'], content: string, metadata: Record<string, unknown> = {}): ToolResult {
  return { status, content, metadata };
}
