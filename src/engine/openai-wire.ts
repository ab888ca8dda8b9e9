import { randomUUID } from 'node:crypto';
import type { Generated, GeneratedCall } from './generation';

/** The answers in OpenAI's chat-completions shapes: whole, or as stream chunks. */

export interface Completion {
  id: string;
  created: number;
  model: string;
}

export const newCompletion = (model: string): Completion => ({ id: `chatcmpl-${randomUUID()}`, created: Math.floor(Date.now() / 1000), model });

const usageOf = (generated: Generated) => ({ prompt_tokens: generated.promptTokens, completion_tokens: generated.completionTokens, total_tokens: generated.promptTokens + generated.completionTokens });

const wireCall = (call: GeneratedCall) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: call.arguments } });

export function wholeCompletion(completion: Completion, generated: Generated) {
  const message = { role: 'assistant' as const, content: generated.calls.length > 0 && !generated.content ? null : generated.content, ...(generated.calls.length > 0 ? { tool_calls: generated.calls.map(wireCall) } : {}) };
  return { ...completion, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: generated.finishReason }], usage: usageOf(generated) };
}

function chunk(completion: Completion, delta: Record<string, unknown>, finishReason: string | null = null) {
  return { ...completion, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finishReason }] };
}

export const roleChunk = (completion: Completion) => chunk(completion, { role: 'assistant', content: '' });
export const textChunk = (completion: Completion, text: string) => chunk(completion, { content: text });
export const callStartChunk = (completion: Completion, index: number, call: { id: string; name: string }) =>
  chunk(completion, { tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] });
export const callArgumentsChunk = (completion: Completion, index: number, fragment: string) => chunk(completion, { tool_calls: [{ index, function: { arguments: fragment } }] });
/** A chunk that says only that generation goes on (a call written under a grammar is sent once whole). */
export const progressChunk = (completion: Completion) => chunk(completion, {});
export const finishChunk = (completion: Completion, generated: Generated) => chunk(completion, {}, generated.finishReason);
export const usageChunk = (completion: Completion, generated: Generated) => ({ ...completion, object: 'chat.completion.chunk', choices: [], usage: usageOf(generated) });
