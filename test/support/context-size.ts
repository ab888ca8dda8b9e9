import { completionReserve, promptTokens } from '../../src/core/model/context-window';
import type { RecordedRequest } from '../kit/scripted-model-server';

/** What a request sent to the scripted server takes of the context: its prompt by Archon's conservative count, plus the room kept for the answer. */
export function contextTaken(request: RecordedRequest, contextLength: number): number {
  const messages = (request.body.messages ?? []).map((message) => ({
    content: typeof message.content === 'string' ? message.content : null,
    toolCalls: ((message.tool_calls ?? []) as { function: { name: string; arguments: string } }[]).map((call) => call.function),
  }));
  const tools = (request.body.tools ?? []).map((tool) => ({ name: tool.function.name, description: (tool.function as { description?: string }).description ?? '', parameters: (tool.function.parameters ?? {}) as Record<string, unknown> }));
  const maxTokens = typeof request.body.max_tokens === 'number' ? request.body.max_tokens : undefined;
  return promptTokens(messages, tools) + completionReserve(contextLength, maxTokens);
}

