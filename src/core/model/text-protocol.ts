import { z } from 'zod';
import type { ChatMessage, ToolSpec } from './chat';
import type { OfferedTool } from './dialects/dialect';
import type { DialectName } from './dialects/dialect-names';
import { jsonAgentAnswer } from './dialects/families';
import { readToolCalls } from './dialects/read-tool-calls';
import { plainContent, splitReasoning } from './dialects/reasoning';
import { extractFirstJsonObject, parseLenientJson } from './lenient-json';

/**
 * The text protocol for servers without tool calling (see docs/model-protocol.md):
 *   Thought: …   Action: {"tool": NAME, "arguments": {…}}   or   Final Answer: …
 * Archon asks in its own format and reads every dialect a model may answer in instead.
 */

export interface TextCall {
  tool: string;
  arguments: unknown;
}

export type TextReply =
  | { kind: 'final'; answer: string }
  | { kind: 'action'; calls: TextCall[]; dialect: DialectName }
  | { kind: 'invalid'; error: string };

export interface TextReplyContext {
  /** The tools offered: a call in a model's own dialect counts only for these names. */
  tools: readonly OfferedTool[];
  /** Reasoning the server sent apart from the content. */
  reasoning?: string;
  /** The dialect the model has used in this run: tried first, and its plain text is its answer. */
  dialect?: DialectName | null;
  /**
   * An Observation came before this reply (a tool already ran in this step): plain prose is then the
   * model's answer, unless it only announces a tool it is about to use.
   */
  afterObservation?: boolean;
}

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

/** Archon's own `Action:` read leniently, so a wrong tool name or bad JSON is explained back to the model. */
function archonAction(content: string, actionAt: number): TextReply {
  const json = extractFirstJsonObject(content, actionAt);
  if (!json) return { kind: 'invalid', error: `The Action had no JSON object after it. ${FORMAT_REMINDER}` };
  const parsed = parseLenientJson(json);
  if (!parsed.ok) return { kind: 'invalid', error: `The Action's JSON could not be read (${parsed.error}). ${FORMAT_REMINDER}` };
  const action = ActionSchema.safeParse(parsed.value);
  if (!action.success) return { kind: 'invalid', error: `The Action must be {"tool": NAME, "arguments": {…}}. ${FORMAT_REMINDER}` };
  return { kind: 'action', calls: [{ tool: action.data.tool, arguments: action.data.arguments ?? {} }], dialect: 'archon' };
}

/** Unreadable arguments go on as text, so the tool's schema check says what was wrong. */
function argumentsValue(text: string): unknown {
  const parsed = parseLenientJson(text);
  return parsed.ok ? parsed.value : text;
}

const INTENT = /\b(?:I will|I'll|I am going to|I'm going to|I need to|I should|let me|let's|next,? I|now I)\b[^.!?\n]*\b(?:use|call|run|invoke|execute|try)\b/i;

/** Prose that only announces a call (`Let me use the calculator.`), naming a tool or ending on a colon: the model meant to act. */
function meansToAct(said: string, tools: readonly OfferedTool[]): boolean {
  if (/:\s*$/.test(said)) return true;
  return INTENT.test(said) || tools.some((tool) => new RegExp(`\\b(?:use|call|run|invoke)\\s+(?:the\\s+)?\`?${tool.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`, 'i').test(said));
}

/** Plain prose as an answer: after the model's own dialect, or after an Observation unless it only announces a call. */
function proseAnswer(said: string, context: TextReplyContext): TextReply | null {
  const answer = said.replace(/^Thought\s*:\s*(?:I now know the final answer\.?\s*)?/i, '').trim();
  if (answer === '') return null;
  if (context.dialect && context.dialect !== 'archon') return { kind: 'final', answer: said };
  return context.afterObservation && !meansToAct(said, context.tools) ? { kind: 'final', answer } : null;
}

export function parseTextReply(text: string, context: TextReplyContext = { tools: [] }): TextReply {
  const { content } = splitReasoning(text);
  const finalAt = markerIndex(content, /Final Answer\s*:/i);
  const found = readToolCalls(text, context.tools, { reasoning: context.reasoning, preferred: context.dialect });
  if (found && (finalAt < 0 || (found.at >= 0 && found.at < finalAt))) {
    return { kind: 'action', calls: found.calls.map((call) => ({ tool: call.name, arguments: argumentsValue(call.arguments) })), dialect: found.dialect };
  }
  const agentAnswer = jsonAgentAnswer(content);
  if (agentAnswer !== null) return { kind: 'final', answer: agentAnswer };
  const actionAt = markerIndex(content, /Action\s*:/i);
  if (finalAt >= 0 && (actionAt < 0 || finalAt < actionAt)) return { kind: 'final', answer: content.slice(finalAt).replace(/^Final Answer\s*:\s*/i, '').trim() };
  if (actionAt >= 0) return archonAction(content, actionAt);
  const answer = proseAnswer(plainContent(content), context);
  return answer ?? { kind: 'invalid', error: `Your reply had neither an Action nor a Final Answer. ${FORMAT_REMINDER}` };
}

export function observationMessage(content: string): string {
  return `Observation: ${content}`;
}

/** A tool's result in the conversation: a native tool message, or the text protocol's Observation. */
export function isObservation(message: ChatMessage): boolean {
  return message.role === 'tool' || (message.role === 'user' && message.content.startsWith(observationMessage('')));
}
