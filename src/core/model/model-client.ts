import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { ArchonError } from '../../shared/errors';
import {
  estimateTokens,
  type ChatMessage,
  type ChatOptions,
  type ChatRequest,
  type ChatResponse,
  type ModelClient,
  type Usage,
} from './chat';
import { fitToContext, type ContextWindow } from './context-window';
import { abortableSleep, backoffDelay, cancelled, DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-policy';
import { assembleCompletion, assembleStream, type AssembledReply } from './stream-assembler';

export interface OpenAIModelClientOptions {
  baseUrl: string;
  model: string;
  apiKey?: string;
  retry?: RetryPolicy;
  /** False for servers that refuse to stream with tools (the probe finds out): whole completions then. */
  streaming?: boolean;
  /** The model's context, when known: every request is fitted into it. */
  context?: ContextWindow | null;
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

/** Every model server, through the official openai SDK: streaming, AbortSignal, our own retries. */
export function createOpenAIModelClient(options: OpenAIModelClientOptions): ModelClient {
  const client = new OpenAI({ baseURL: options.baseUrl, apiKey: options.apiKey || 'not-needed', maxRetries: 0, timeout: 10 * 60 * 1000 });
  const policy = options.retry ?? DEFAULT_RETRY_POLICY;

  async function attempt(request: ChatRequest, signal: AbortSignal): Promise<AssembledReply> {
    const body = {
      model: options.model,
      messages: request.messages.map(toWire),
      tools: toolsToWire(request),
      ...(request.maxTokens ? { max_tokens: request.maxTokens } : {}),
    };
    const sent = { signal, headers: { 'X-Archon-Purpose': request.purpose } };
    if (options.streaming === false) return assembleCompletion(await client.chat.completions.create({ ...body, stream: false }, sent));
    return assembleStream(await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } }, sent));
  }

  return {
    baseUrl: options.baseUrl,
    model: options.model,
    async chat(asked: ChatRequest, chatOptions: ChatOptions): Promise<ChatResponse> {
      const request = fitToContext(asked, options.context ?? null);
      const promptEstimate = estimateTokens(JSON.stringify(request.messages) + JSON.stringify(request.tools ?? []));
      for (let number = 1; ; number++) {
        chatOptions.signal.throwIfAborted();
        try {
          const result = await attempt(request, chatOptions.signal);
          const usage: Usage = result.usage
            ? { promptTokens: result.usage.prompt_tokens, completionTokens: result.usage.completion_tokens, estimated: false }
            : { promptTokens: promptEstimate, completionTokens: estimateTokens(result.content + JSON.stringify(result.toolCalls)), estimated: true };
          chatOptions.onAttempt?.({ attempt: number, ok: true, usage });
          return { content: result.content, reasoning: result.reasoning, toolCalls: result.toolCalls, usage, attempts: number };
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
