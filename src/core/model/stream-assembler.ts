import { isDeepStrictEqual } from 'node:util';
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import { parseJsonOrUndefined } from '../../shared/json';
import type { ToolCallRequest } from './chat';

/**
 * Turns what a server sends back, streamed or whole, into content, reasoning and tool calls, and
 * undoes the ways real servers stray from OpenAI's streaming format (docs/model-protocol.md,
 * "Server quirks"): arguments as a JSON object, the name repeated in every chunk, parallel calls
 * sharing one index or carrying none, cumulative arguments and arguments repeated at the end.
 */

export interface AssembledReply {
  content: string;
  /** What the server returned as the model's reasoning (`reasoning_content` or `reasoning`). */
  reasoning: string;
  toolCalls: ToolCallRequest[];
  usage: ChatCompletion['usage'] | null;
}

/** The fields of a tool-call delta as servers really send them: any of them may be missing or of the wrong type. */
interface LooseToolCallPart {
  index?: number | null;
  id?: string | null;
  function?: { name?: string | null; arguments?: unknown } | null;
}

interface LooseMessage {
  content?: string | null;
  reasoning_content?: unknown;
  reasoning?: unknown;
  tool_calls?: LooseToolCallPart[] | null;
}

/** llama.cpp may send arguments as a JSON object rather than a string. */
function argumentText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function reasoningOf(message: LooseMessage): string {
  const value = message.reasoning_content ?? message.reasoning;
  return typeof value === 'string' ? value : '';
}

const CLOSING: Record<string, string> = { '{': '}', '[': ']' };

/**
 * Arguments that already parse as one JSON value: a call that is complete. An object or array is
 * parsed only once it ends with its closing bracket: a call streamed in thousands of fragments is not
 * parsed (and thrown out) again at every one, which cost time in the square of its length.
 */
function completeJson(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  const closing = CLOSING[trimmed.charAt(0)];
  return closing !== undefined && !trimmed.endsWith(closing) ? undefined : parseJsonOrUndefined(trimmed);
}

interface Draft {
  id: string;
  name: string;
  arguments: string;
}

/** Whether a part begins another call rather than continuing `current`. */
function beginsNewCall(current: Draft | undefined, part: LooseToolCallPart, name: string, fragment: string): boolean {
  if (!current) return true;
  if (part.id && current.id && part.id !== current.id) return true;
  const assembled = completeJson(current.arguments);
  if (assembled === undefined) return false;
  if (name && current.name && name !== current.name) return true;
  if (fragment.trim() === '') return false;
  return !isDeepStrictEqual(completeJson(fragment), assembled);
}

function extend(draft: Draft, part: LooseToolCallPart, name: string, fragment: string): void {
  if (part.id && !draft.id) draft.id = part.id;
  if (name && name !== draft.name) draft.name = draft.name && draft.arguments === '' ? draft.name + name : draft.name || name;
  if (fragment === '') return;
  if (draft.arguments !== '' && fragment.startsWith(draft.arguments)) draft.arguments = fragment;
  else if (completeJson(draft.arguments) === undefined) draft.arguments += fragment;
}

/** Folds tool-call parts, in the order they arrive, into calls. */
class ToolCallAssembler {
  private readonly drafts: Draft[] = [];
  private readonly byIndex = new Map<number, Draft>();

  add(part: LooseToolCallPart): void {
    const name = part.function?.name ?? '';
    const fragment = argumentText(part.function?.arguments);
    const index = typeof part.index === 'number' ? part.index : null;
    const current = index === null ? this.drafts.at(-1) : this.byIndex.get(index);
    let draft = current;
    if (beginsNewCall(current, part, name, fragment)) {
      draft = { id: '', name: '', arguments: '' };
      this.drafts.push(draft);
      if (index !== null) this.byIndex.set(index, draft);
    }
    extend(draft as Draft, part, name, fragment);
  }

  calls(): ToolCallRequest[] {
    return this.drafts.filter((draft) => draft.name !== '').map((draft, position) => ({ ...draft, id: draft.id || `call_${position}` }));
  }
}

/** Reads a streamed completion to its end. */
export async function assembleStream(stream: AsyncIterable<ChatCompletionChunk>): Promise<AssembledReply> {
  let content = '';
  let reasoning = '';
  let usage: AssembledReply['usage'] = null;
  const calls = new ToolCallAssembler();
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    const delta = chunk.choices[0]?.delta as LooseMessage | undefined;
    if (!delta) continue;
    content += delta.content ?? '';
    reasoning += reasoningOf(delta);
    for (const part of delta.tool_calls ?? []) calls.add(part);
  }
  return { content, reasoning, toolCalls: calls.calls(), usage };
}

/** Reads a completion that was not streamed (servers that cannot stream with tools). */
export function assembleCompletion(completion: ChatCompletion): AssembledReply {
  const message = (completion.choices[0]?.message ?? {}) as LooseMessage;
  const toolCalls = (message.tool_calls ?? [])
    .filter((part) => part.function?.name)
    .map((part, position) => ({ id: part.id || `call_${position}`, name: part.function?.name ?? '', arguments: argumentText(part.function?.arguments) }));
  return { content: message.content ?? '', reasoning: reasoningOf(message), toolCalls, usage: completion.usage ?? null };
}
