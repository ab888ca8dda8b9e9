import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ToolResultPartSchema, type ToolResult, type ToolResultPart } from '../../shared/schemas/tool';
import type { McpCallLost } from './mcp-session';

const MAX_PARTS = 32;
const MAX_IMAGE_CHARS = 262_144;

/**
 * An MCP result as Archon's: text (and text resources) becomes the content the model reads; images
 * (up to the size the schema allows) and resources become `parts` for the step inspector, each
 * mentioned in the content so the model knows they exist.
 */
export function toToolResult(result: CallToolResult): ToolResult {
  const text: string[] = [];
  const parts: ToolResultPart[] = [];
  for (const item of result.content ?? []) {
    if (item.type === 'text') text.push(item.text);
    else if (item.type === 'image') {
      if (item.data.length <= MAX_IMAGE_CHARS) parts.push({ type: 'image', mimeType: item.mimeType, data: item.data });
      text.push(item.data.length <= MAX_IMAGE_CHARS ? `[image ${item.mimeType}]` : `[image ${item.mimeType} left out: larger than ${MAX_IMAGE_CHARS} base64 characters]`);
    } else if (item.type === 'resource_link') {
      parts.push({ type: 'resource', uri: item.uri, name: item.name, mimeType: item.mimeType });
      text.push(`[resource ${item.uri}${item.name ? ` (${item.name})` : ''}]`);
    } else if (item.type === 'resource') {
      parts.push({ type: 'resource', uri: item.resource.uri, mimeType: item.resource.mimeType });
      text.push('text' in item.resource && typeof item.resource.text === 'string' ? item.resource.text : `[resource ${item.resource.uri}]`);
    } else text.push(`[${item.type} content not shown]`);
  }
  if (text.length === 0 && result.structuredContent !== undefined) text.push(JSON.stringify(result.structuredContent));
  const valid = parts.filter((part) => ToolResultPartSchema.safeParse(part).success).slice(0, MAX_PARTS);
  return { status: result.isError ? 'error' : 'success', content: text.join('\n'), metadata: {}, ...(valid.length > 0 ? { parts: valid } : {}) };
}

/**
 * A call the server never answered because it died (or its connection broke) with the call in flight.
 * An idempotent tool may simply be called again; any other's outcome is unknown, as an interrupted
 * built-in call's is: the model is told to check the effect before it repeats the call.
 */
export function lostCallResult(lost: McpCallLost, idempotent: boolean): ToolResult {
  const metadata = { mcpFailure: lost.failure.kind };
  if (idempotent) return { status: 'error', content: lost.message, metadata };
  return {
    status: 'error',
    content:
      `Outcome unknown: MCP server "${lost.server}" stopped before it answered the call to ${lost.tool}, which may or may not have happened; it was not run again. ` +
      `Check its effect first (for example, read what it would have changed) and repeat it only if it did not happen. The server ${lost.how}`,
    metadata: { ...metadata, outcome: 'unknown' },
  };
}
