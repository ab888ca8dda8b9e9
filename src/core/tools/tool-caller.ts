import type { ToolResult } from '../../shared/schemas/tool';

export interface CallOptions {
  signal: AbortSignal;
  timeoutMs: number;
  onSpawn?(pgid: number): void;
  /** The call has no side effects: it may share a worker with other such calls, and it is tried once more when its worker died under it. */
  readOnly?: boolean;
  /** The call's run and journal id: a remote executor runs each key once. */
  key?: string;
}

/** What runs a built-in tool's calls: the local pool of tool processes, or the workers of a Restate cluster. A call never throws: what went wrong is its result. */
export interface ToolCaller {
  call(tool: string, args: unknown, options: CallOptions): Promise<ToolResult>;
  /** Where the calls run when not on this machine (`restate:<ingress>`): a call sent there twice under one key runs once. */
  readonly executor?: string;
  /** How much longer than a call's own limit its result may take to come back (a remote caller's). */
  readonly waitAllowanceMs?: number;
}
