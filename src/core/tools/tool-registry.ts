import { z } from 'zod';
import { ArchonError, describeZodError } from '../../shared/errors';
import type { ApprovalPreview } from '../../shared/schemas/approval';
import type { ToolApprovalOverride } from '../../shared/schemas/settings';
import type { SideEffects, ToolResult } from '../../shared/schemas/tool';
import type { McpToolFacts } from '../mcp/tool-definition';
import type { ToolSpec } from '../model/chat';

/** A server's question to the operator (MCP elicitation), and the answer. */
export interface Elicitation {
  server: string;
  message: string;
  requestedSchema: Record<string, unknown>;
}
export type ElicitationAnswer = { action: 'accept'; content: Record<string, unknown> } | { action: 'decline' | 'cancel' };

export interface ToolContext {
  signal: AbortSignal;
  workspace: string;
  runId: string;
  stepId: string;
  /** The call's id in the run's journal: stable across a resume, so a remote executor runs the call once. */
  callId: string;
  /** This call's time limit (the tool's, or less when the call asks for less). */
  timeoutMs: number;
  /** Told of each process group the call starts, so it can be recorded before it can outlive the runtime. */
  onSpawn?(pgid: number): void;
  /** Puts a server's question to the operator (MCP elicitation). */
  elicit?(request: Elicitation, signal: AbortSignal): Promise<ElicitationAnswer>;
}

/** What a run is told about its tools before it starts: an MCP server that failed, a tool whose definition changed. */
export type ToolNotice =
  | { type: 'tool.definition_changed'; tool: string; server: string; previousHash: string; hash: string }
  | { type: 'mcp.server_failed'; server: string; kind: string; message: string };

/** A tool as the runtime knows it. The input schema is both the validator and the JSON Schema the model sees. */
export interface ToolDefinition<Input extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  input: Input;
  sideEffects: SideEffects;
  idempotent: boolean;
  /** Where the call runs when not on this machine (`restate:<ingress>`): asked there again under the same call id, it is not run again. */
  executor?: string;
  /** How much longer than its limit a call's result may take to come back (one that runs elsewhere). */
  waitAllowanceMs?: number;
  /** Runs outside any OS sandbox (the operator turned it off): asked for under every policy. */
  unconfined?: boolean;
  timeoutMs: number;
  /** A call may ask for its own limit (run_command's timeout_s). */
  timeoutFor?(args: z.output<Input>): number;
  run(args: z.output<Input>, context: ToolContext): Promise<ToolResult>;
  /** The JSON Schema the model sees when it is not derived from `input` (an MCP tool's own). */
  parameters?: Record<string, unknown>;
  /** An MCP tool: its server, name, description, annotations and definition hash, shown with every approval. */
  mcp?: McpToolFacts;
  /** The operator's per-tool setting that applies to this tool (default: the one under its name). */
  approvalOverride?(settings: Readonly<Record<string, ToolApprovalOverride>>): ToolApprovalOverride | undefined;
  /** What a call will do, shown with its approval (a file write's diff, a command's dangerous parts). */
  preview?(args: z.output<Input>, context: PreviewContext): Promise<ApprovalPreview>;
}

export interface PreviewContext {
  signal: AbortSignal;
  workspace: string;
}

/** Erases a tool's input type so tools of different inputs can share one registry. */
export function defineTool<Input extends z.ZodType>(tool: ToolDefinition<Input>): ToolDefinition {
  return tool as unknown as ToolDefinition;
}

/** A call's outcome when it began where it could not report (a worker that died under it): it may have happened. */
export const UNCERTAIN_OUTCOME = 'uncertain';

export type PreparedCall = { ok: true; tool: ToolDefinition; args: unknown } | { ok: false; result: ToolResult };

export function toolResult(status: ToolResult['status'], content: string, metadata: Record<string, unknown> = {}): ToolResult {
  return { status, content, metadata };
}

/** Each zod input's JSON Schema, converted once: every model call sends every tool's spec. */
const jsonSchemas = new WeakMap<z.ZodType, Record<string, unknown>>();

function jsonSchemaOf(input: z.ZodType): Record<string, unknown> {
  let schema = jsonSchemas.get(input);
  if (!schema) {
    schema = z.toJSONSchema(input, { io: 'input' }) as Record<string, unknown>;
    jsonSchemas.set(input, schema);
  }
  return schema;
}

export class ToolRegistry {
  private readonly tools: ReadonlyMap<string, ToolDefinition>;

  constructor(
    tools: readonly ToolDefinition[],
    readonly notices: readonly ToolNotice[] = [],
  ) {
    const byName = new Map<string, ToolDefinition>();
    for (const tool of tools) {
      if (byName.has(tool.name)) throw new ArchonError('INTERNAL', `Two tools are both named ${tool.name}: a call could reach the wrong one, so none is registered.`);
      byName.set(tool.name, tool);
    }
    this.tools = byName;
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  get(name: string): ToolDefinition | undefined {
    return this.tools.get(name);
  }

  /** The registry without some tools: a locked constraint removes a tool in code, not in the prompt. */
  without(names: readonly string[]): ToolRegistry {
    return new ToolRegistry([...this.tools.values()].filter((tool) => !names.includes(tool.name)), this.notices);
  }

  specs(): ToolSpec[] {
    return [...this.tools.values()].map((tool) => ({
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters ?? jsonSchemaOf(tool.input),
    }));
  }

  /** Validates a call before anything runs; a failure is an observation the model can act on. */
  prepare(name: string, rawArgs: unknown): PreparedCall {
    const tool = this.tools.get(name);
    if (!tool) {
      const available = this.names();
      return { ok: false, result: toolResult('error', `Unknown tool "${name}". Available tools: ${available.length > 0 ? available.join(', ') : 'none'}.`) };
    }
    const parsed = tool.input.safeParse(rawArgs);
    if (!parsed.success) {
      return { ok: false, result: toolResult('error', `Invalid arguments for ${name}: ${describeZodError(parsed.error)}. Call it again with arguments matching its schema.`) };
    }
    return { ok: true, tool, args: parsed.data };
  }

  /** Runs a prepared call under its timeout; it never throws. */
  async execute(tool: ToolDefinition, args: unknown, context: Omit<ToolContext, 'timeoutMs'>): Promise<ToolResult> {
    const timeoutMs = tool.timeoutFor?.(args) ?? tool.timeoutMs;
    // A little slack, so a tool that enforces its own limit reports it before this one fires; more for one that runs elsewhere.
    const timeout = AbortSignal.timeout(timeoutMs + 500 + (tool.waitAllowanceMs ?? 0));
    const signal = AbortSignal.any([context.signal, timeout]);
    const timedOut = () => toolResult('timeout', `${tool.name} did not finish within ${timeoutMs / 1000} s.`);
    try {
      const result = await tool.run(args, { ...context, signal, timeoutMs });
      return result.status === 'cancelled' && timeout.aborted && !context.signal.aborted ? timedOut() : result;
    } catch (error) {
      if (context.signal.aborted) return toolResult('cancelled', `${tool.name} was cancelled.`);
      if (timeout.aborted) return timedOut();
      return toolResult('error', `${tool.name} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
