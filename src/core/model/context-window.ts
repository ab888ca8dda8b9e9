import { ArchonError } from '../../shared/errors';
import type { ChatMessage, ChatRequest, ToolSpec } from './chat';
import { isObservation } from './text-protocol';

/**
 * Keeps every request inside the model's context (docs/model-protocol.md, "Context window"): room is
 * kept for the answer, and when the prompt is too long the tool results (native `tool` messages and
 * text-mode `Observation:` messages) are cut, the oldest turns first and the largest first within
 * them, each with a note saying so. A request whose system prompt, step brief and last turn cannot
 * fit even then is refused with what to do about it.
 */

export interface ContextWindow {
  contextLength: number;
  /** Where the length came from, named in the error when a request cannot fit. */
  source: string | null;
}

/** The context a probe found, when it found one. */
export function contextWindowOf(probe: { contextLength: number | null; contextSource: string | null }): ContextWindow | null {
  return probe.contextLength === null ? null : { contextLength: probe.contextLength, source: probe.contextSource };
}

/** A few tokens per message for the chat template's role markers. */
const MESSAGE_OVERHEAD_TOKENS = 8;
/** What is left of an observation at the least: its start, so the model still sees what it was. */
const MIN_KEPT_CHARS = 200;

const utf8 = new TextEncoder();

/**
 * A conservative token count: a token per three bytes of UTF-8. English prose runs near four
 * characters a token and code or JSON near three; CJK text is three bytes a character and about a
 * token each, so the count stays at or above what real tokenizers give.
 */
export function conservativeTokens(text: string): number {
  return Math.ceil(utf8.encode(text).length / 3);
}

/** What a message weighs, in the shape both Archon's messages and the wire's share. */
export interface WeighedMessage {
  content: string | null;
  toolCalls?: readonly { name: string; arguments: string }[];
}

function messageTokens(message: WeighedMessage): number {
  const calls = (message.toolCalls ?? []).reduce((sum, call) => sum + MESSAGE_OVERHEAD_TOKENS + conservativeTokens(call.name + call.arguments), 0);
  return MESSAGE_OVERHEAD_TOKENS + conservativeTokens(message.content ?? '') + calls;
}

/** The prompt's size as the server will see it: every message, and each tool's name, description and schema. */
export function promptTokens(messages: readonly WeighedMessage[], tools: readonly ToolSpec[] | undefined): number {
  const toolTokens = (tools ?? []).reduce((sum, tool) => sum + MESSAGE_OVERHEAD_TOKENS + conservativeTokens(tool.name + tool.description + JSON.stringify(tool.parameters)), 0);
  return messages.reduce((sum, message) => sum + messageTokens(message), toolTokens);
}

/** Room kept for the answer: what the request asks for, else a quarter of the context (256 to 4,096 tokens). */
export function completionReserve(contextLength: number, maxTokens: number | undefined): number {
  return maxTokens ?? Math.min(4096, Math.max(256, Math.floor(contextLength / 4)));
}

/** Observations to cut, in order: those before the last turn first, the largest first. */
function cuttingOrder(messages: readonly ChatMessage[]): number[] {
  const lastTurn = messages.findLastIndex((message) => message.role === 'assistant');
  const size = (index: number) => (messages[index]?.content ?? '').length;
  return messages
    .map((message, index) => (isObservation(message) ? index : -1))
    .filter((index) => index >= 0)
    .sort((a, b) => Number(a > lastTurn) - Number(b > lastTurn) || size(b) - size(a));
}

function cut(content: string, removeChars: number, window: ContextWindow): string {
  const kept = Math.max(MIN_KEPT_CHARS, content.length - removeChars);
  if (kept >= content.length) return content;
  return `${content.slice(0, kept)}\n[truncated by Archon: ${content.length - kept} of ${content.length} characters left out to fit the model's context of ${window.contextLength} tokens]`;
}

function tooSmall(needed: number, budget: number, window: ContextWindow): ArchonError {
  const from = window.source ? ` (${window.source})` : '';
  return new ArchonError(
    'CONTEXT_TOO_SMALL',
    `The model's context of ${window.contextLength} tokens${from} is too small for this request: its system prompt, step brief and last turn need about ${needed} tokens, ` +
      `and ${budget} are left after room for the answer, with every tool result already cut short. Raise the context: Ollama — set OLLAMA_CONTEXT_LENGTH (or the model's num_ctx) and restart it; ` +
      "llama.cpp — start llama-server with a larger -c; LM Studio — load the model with a larger context length; then set Archon's contextLength setting if the server does not report it.",
    { details: { contextLength: window.contextLength, needed, budget } },
  );
}

/**
 * How many tokens a server counted for each one the estimate gave, learnt from what it reported:
 * a model with a small vocabulary spends more tokens a byte than any estimate assumes. Never below 1,
 * and it only grows, so a request that fitted by a server's count keeps fitting.
 */
export class TokenCalibration {
  private ratio = 1;

  get scale(): number {
    return this.ratio;
  }

  /** The server counted `counted` tokens for a prompt estimated at `estimated`; true when that raised the scale. */
  learn(counted: number, estimated: number): boolean {
    if (estimated <= 0 || counted / estimated <= this.ratio) return false;
    this.ratio = counted / estimated;
    return true;
  }
}

/** The request as it may be sent: unchanged when it fits, else with observations cut until it does. `scale`: a calibration's. */
export function fitToContext(request: ChatRequest, window: ContextWindow | null, scale = 1): ChatRequest {
  if (!window) return request;
  const budget = window.contextLength - completionReserve(window.contextLength, request.maxTokens);
  const weigh = (messages: readonly ChatMessage[]) => Math.ceil(promptTokens(messages, request.tools) * scale);
  let total = weigh(request.messages);
  if (total <= budget) return request;
  const messages = [...request.messages];
  for (const index of cuttingOrder(messages)) {
    const message = messages[index] as ChatMessage & { content: string };
    // A removed character is at least one byte, so cutting three characters a token over is enough.
    messages[index] = { ...message, content: cut(message.content, (total - budget) * 3 + 200, window) };
    total = weigh(messages);
    if (total <= budget) return { ...request, messages };
  }
  throw tooSmall(total, budget, window);
}
