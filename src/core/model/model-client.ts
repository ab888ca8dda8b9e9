import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { ArchonError } from '../../shared/errors';
import {
  estimateTokens,
  type ChatMessage,
  type ChatOptions,
  type ChatRequest,
  type ChatResponse,
  type ModelClient,
  type ToolCallRequest,
  type Usage,
} from './chat';
import { readModelTurn } from './dialects/read-tool-calls';
import { abortableSleep, backoffDelay, cancelled, DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-policy';

export interface OpenAIModelClientOptions {
  baseUrl: string;
  model: string;
  apiKey?: string;
  retry?: RetryPolicy;
}

function toWire(message: ChatMessage): ChatCompletionMessageParam {
  if (message.role === 'tool') return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  if (message.role === 'assistant') {
    return {
      role: 'assistant',
      content: message.content,
      ...(message.toolCalls && message.toolCalls.length > 0
        ? { tool_calls: message.toolCalls.map((call) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: call.arguments } })) }
        : {}),
    };
  }
  return { role: message.role, content: message.content };
}

function toolsToWire(request: ChatRequest): ChatCompletionTool[] | undefined {
  if (!request.tools || request.tools.length === 0) return undefined;
  return request.tools.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } }));
}

function isRetryable(error: unknown): boolean {
  if (error instanceof OpenAI.APIUserAbortError) return false;
  if (error instanceof OpenAI.APIConnectionError) return true;
  if (error instanceof OpenAI.APIError) return error.status === 429 || error.status === 408 || (error.status !== undefined && error.status >= 500);
  return false;
}

function retryAfterMs(error: unknown): number | null {
  if (!(error instanceof OpenAI.APIError) || !error.headers) return null;
  const seconds = Number(error.headers.get('retry-after'));
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 30) * 1000 : null;
}

function describe(error: unknown, baseUrl: string): string {
  if (error instanceof OpenAI.APIConnectionError) return `cannot reach ${baseUrl} (${error.message})`;
  if (error instanceof OpenAI.APIError) return `HTTP ${error.status ?? '?'} from ${baseUrl}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

/** Reads a streamed completion into content, tool calls and usage. */
async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<{ content: string; reasoning: string; toolCalls: ToolCallRequest[]; usage: ChatCompletionChunk['usage'] }> {
  let content = '';
  let reasoning = '';
  let usage: ChatCompletionChunk['usage'] = null;
  const calls = new Map<number, ToolCallRequest>();
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    const delta = chunk.choices[0]?.delta;
    if (!delta) continue;
    content += delta.content ?? '';
    reasoning += reasoningOf(delta);
    for (const part of delta.tool_calls ?? []) {
      const call = calls.get(part.index) ?? { id: '', name: '', arguments: '' };
      call.id = part.id ?? call.id;
      call.name += part.function?.name ?? '';
      call.arguments += part.function?.arguments ?? '';
      calls.set(part.index, call);
    }
  }
  const toolCalls = [...calls.entries()].sort(([a], [b]) => a - b).map(([index, call]) => ({ ...call, id: call.id || `call_${index}` }));
  return { content, reasoning, toolCalls, usage };
}

/** llama.cpp and vLLM send `reasoning_content`, Ollama and LM Studio `reasoning`: neither is in the SDK's types. */
function reasoningOf(delta: object): string {
  const { reasoning_content: content, reasoning } = delta as { reasoning_content?: unknown; reasoning?: unknown };
  return typeof content === 'string' ? content : typeof reasoning === 'string' ? reasoning : '';
}

/** Every model server, through the official openai SDK: streaming, AbortSignal, our own retries. */
export function createOpenAIModelClient(options: OpenAIModelClientOptions): ModelClient {
  const client = new OpenAI({ baseURL: options.baseUrl, apiKey: options.apiKey || 'not-needed', maxRetries: 0, timeout: 10 * 60 * 1000 });
  const policy = options.retry ?? DEFAULT_RETRY_POLICY;

  async function attempt(request: ChatRequest, signal: AbortSignal) {
    const stream = await client.chat.completions.create(
      {
        model: options.model,
        messages: request.messages.map(toWire),
        tools: toolsToWire(request),
        stream: true,
        stream_options: { include_usage: true },
        ...(request.maxTokens ? { max_tokens: request.maxTokens } : {}),
      },
      { signal, headers: { 'X-Archon-Purpose': request.purpose } },
    );
    const collected = await collect(stream);
    // A call the server's parser missed (left as text in the content or reasoning) is still a call.
    return { ...readModelTurn(collected, request.tools), usage: collected.usage };
  }

  return {
    baseUrl: options.baseUrl,
    model: options.model,
    async chat(request: ChatRequest, chatOptions: ChatOptions): Promise<ChatResponse> {
      const promptEstimate = estimateTokens(JSON.stringify(request.messages) + JSON.stringify(request.tools ?? []));
      for (let number = 1; ; number++) {
        chatOptions.signal.throwIfAborted();
        try {
          const result = await attempt(request, chatOptions.signal);
          const usage: Usage = result.usage
            ? { promptTokens: result.usage.prompt_tokens, completionTokens: result.usage.completion_tokens, estimated: false }
            : { promptTokens: promptEstimate, completionTokens: estimateTokens(result.content + JSON.stringify(result.toolCalls)), estimated: true };
          chatOptions.onAttempt?.({ attempt: number, ok: true, usage });
          return { content: result.content, toolCalls: result.toolCalls, reasoning: result.reasoning, dialect: result.dialect, usage, attempts: number };
        } catch (error) {
          if (chatOptions.signal.aborted) throw cancelled(chatOptions.signal);
          const reason = describe(error, options.baseUrl);
          chatOptions.onAttempt?.({ attempt: number, ok: false, usage: { promptTokens: promptEstimate, completionTokens: 0, estimated: true }, error: reason });
          if (!isRetryable(error) || number > policy.retries) {
            const tries = number > 1 ? ` after ${number} attempts` : '';
            throw new ArchonError('MODEL_CALL_FAILED', `The model call failed${tries}: ${reason}`, { cause: error, details: { status: error instanceof OpenAI.APIError ? error.status : undefined } });
          }
          await abortableSleep(backoffDelay(policy, number - 1, retryAfterMs(error)), chatOptions.signal);
        }
      }
    },
  };
}
