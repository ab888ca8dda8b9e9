import type { ChatHistoryItem, ChatModelFunctionCall, ChatModelResponse } from 'node-llama-cpp';
import { textOf, type WireMessage, type WireToolCall } from './chat-request';

/**
 * OpenAI's messages as node-llama-cpp's chat history, which the model's own chat template renders.
 * A tool's result belongs to its call there, and the model's answer after the results continues
 * the same model turn, as node-llama-cpp keeps a turn with function calls.
 */

function parsedOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function functionCall(call: WireToolCall): ChatModelFunctionCall & { id: string } {
  return { type: 'functionCall', id: call.id, name: call.function.name, params: parsedOr(call.function.arguments), result: '' };
}

/** The last model turn, when nothing but tool results came after it: the turn a new assistant message continues. */
function openTurn(history: ChatHistoryItem[], sinceToolResults: boolean): ChatModelResponse | null {
  const last = history.at(-1);
  return sinceToolResults && last?.type === 'model' ? last : null;
}

function findCall(turn: ChatHistoryItem | undefined, id: string): ChatModelFunctionCall | undefined {
  if (turn?.type !== 'model') return undefined;
  return turn.response.find((item): item is ChatModelFunctionCall & { id: string } => typeof item === 'object' && item.type === 'functionCall' && (item as { id?: string }).id === id);
}

export function toChatHistory(messages: readonly WireMessage[]): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = [];
  let sinceToolResults = false;
  for (const message of messages) {
    const text = textOf(message.content);
    if (message.role === 'tool') {
      const call = findCall(history.at(-1), message.tool_call_id);
      if (call) call.result = parsedOr(text);
      else history.push({ type: 'user', text: `Result of tool call ${message.tool_call_id}:\n${text}` });
      sinceToolResults = call !== undefined;
      continue;
    }
    if (message.role === 'assistant') {
      const response = [...(text ? [text] : []), ...(message.tool_calls ?? []).map(functionCall)];
      const turn = openTurn(history, sinceToolResults);
      if (turn) turn.response.push(...response);
      else history.push({ type: 'model', response });
    } else if (message.role === 'user') history.push({ type: 'user', text });
    else history.push({ type: 'system', text });
    sinceToolResults = false;
  }
  return history;
}
