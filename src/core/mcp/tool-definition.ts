import { createHash } from 'node:crypto';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { canonicalJson } from '../../shared/canonical-json';
import type { SideEffects } from '../../shared/schemas/tool';

/** What the operator approves an MCP tool by: shown in the approval dialog, and hashed. */
export interface McpToolFacts {
  server: string;
  tool: string;
  description: string;
  annotations: Record<string, unknown>;
  definitionHash: string;
}

/** A hash of what a server says a tool is: name, description, input schema, annotations. A change to any of them is a new tool to the operator. */
export function definitionHash(tool: Tool): string {
  const definition = { name: tool.name, description: tool.description ?? '', inputSchema: tool.inputSchema, annotations: tool.annotations ?? {} };
  return `sha256:${createHash('sha256').update(canonicalJson(definition)).digest('hex')}`;
}

/** Side effects from the annotations: readOnlyHint → none; destructiveHint false → reversible; otherwise irreversible. */
export function sideEffectsOf(tool: Tool): SideEffects {
  if (tool.annotations?.readOnlyHint === true) return 'none';
  if (tool.annotations?.destructiveHint === false) return 'reversible';
  return 'irreversible';
}

/** May resume run it again: idempotentHint, or a read-only tool (which changes nothing). */
export function idempotentOf(tool: Tool): boolean {
  return tool.annotations?.idempotentHint === true || tool.annotations?.readOnlyHint === true;
}

export function factsOf(server: string, tool: Tool): McpToolFacts {
  return { server, tool: tool.name, description: tool.description ?? '', annotations: { ...(tool.annotations ?? {}) }, definitionHash: definitionHash(tool) };
}
