import { z } from 'zod';
import type { ToolSpec } from './chat';
import { extractFirstJsonObject, parseLenientJson } from './lenient-json';

/**
 * The text protocol for servers without tool calling (see docs/model-protocol.md):
 *   Thought: …   Action: {"tool": NAME, "arguments": {…}}   or   Final Answer: …
 */

export type TextReply =
  | { kind: 'final'; answer: string }
  | { kind: 'action'; tool: string; arguments: unknown }
  | { kind: 'invalid'; error: string };

const ActionSchema = z.union([
  z.object({ tool: z.string().min(1), arguments: z.unknown().optional() }),
  z.object({ name: z.string().min(1), arguments: z.unknown().optional() }).transform(({ name, arguments: args }) => ({ tool: name, arguments: args })),
  z.object({ tool: z.string().min(1), args: z.unknown().optional() }).transform(({ tool, args }) => ({ tool, arguments: args })),
]);

const FORMAT_REMINDER =
  'Reply with either\nThought: <your reasoning>\nAction: {"tool": "<tool name>", "arguments": {<arguments as JSON>}}\nor\nFinal Answer: <the result>';

export function textProtocolInstructions(tools: ToolSpec[]): string {
  const catalogue = tools.map((tool) => `- ${tool.name}: ${tool.description}\n  arguments (JSON Schema): ${JSON.stringify(tool.parameters)}`).join('\n');
  return [
    tools.length > 0 ? `You can use these tools:\n${catalogue}` : 'You have no tools for this.',
    'Use one tool at a time and wait for its Observation.',
    FORMAT_REMINDER,
  ].join('\n\n');
}

function markerIndex(text: string, marker: RegExp): number {
  const match = marker.exec(text);
  return match ? match.index : -1;
}

export function parseTextReply(text: string): TextReply {
  const actionAt = markerIndex(text, /Action\s*:/i);
  const finalAt = markerIndex(text, /Final Answer\s*:/i);
  if (finalAt >= 0 && (actionAt < 0 || finalAt < actionAt)) {
    return { kind: 'final', answer: text.slice(finalAt).replace(/^Final Answer\s*:\s*/i, '').trim() };
  }
  if (actionAt < 0) return { kind: 'invalid', error: `Your reply had neither an Action nor a Final Answer. ${FORMAT_REMINDER}` };
  const json = extractFirstJsonObject(text, actionAt);
  if (!json) return { kind: 'invalid', error: `The Action had no JSON object after it. ${FORMAT_REMINDER}` };
  const parsed = parseLenientJson(json);
  if (!parsed.ok) return { kind: 'invalid', error: `The Action's JSON could not be read (${parsed.error}). ${FORMAT_REMINDER}` };
  const action = ActionSchema.safeParse(parsed.value);
  if (!action.success) return { kind: 'invalid', error: `The Action must be {"tool": NAME, "arguments": {…}}. ${FORMAT_REMINDER}` };
  return { kind: 'action', tool: action.data.tool, arguments: action.data.arguments ?? {} };
}

export function observationMessage(content: string): string {
  return `Observation: ${content}`;
}
