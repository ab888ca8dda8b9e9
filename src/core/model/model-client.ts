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
import { readModelTurn } from './dialects/read-tool-calls';
import { fitToContext, type ContextWindow } from './context-window';
import { httpFetch } from './http-fetch';
import { cancelled, DEFAULT_RETRY_POLICY, MAX_ATTEMPTS, modelUnavailable, RetryWindow, SYSTEM_CLOCK, type RetryClock, type RetryPolicy } from './retry-policy';
import { StallWatchdog } from './stall-watchdog';
import { assembleCompletion, assembleStream } from './stream-assembler';
import { anySignal } from '../../shared/abort';

export interface OpenAIModelClientOptions {
  baseUrl: string;
  model: string;
  apiKey?: string;
  retry?: RetryPolicy;
  /** False for servers that refuse to stream with tools (the probe finds out): whole completions then. */
  streaming?: boolean;
  /** The model's context, when known: every request is fitted into it. */
  context?: ContextWindow | null;
  /** The time retries read and wait on (a test's own clock). */
  clock?: RetryClock;
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

/** An attempt the watchdog ended: the server stopped answering. */
class StalledAttempt extends Error {}

const NETWORK_ERROR_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

/** A connection that broke mid-stream surfaces as a plain error whose cause names the socket. */
function isNetworkFailure(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if ((typeof code === 'string' && NETWORK_ERROR_CODES.has(code)) || current.message === 'terminated') return true;
    current = current.cause;
  }
  return false;
}

function isRetryable(error: unknown): boolean {
  if (error instanceof StalledAttempt || isNetworkFailure(error)) return true;
  if (error instanceof OpenAI.APIUserAbortError) return false;
  if (error instanceof OpenAI.APIConnectionError) return true;
  if (error instanceof OpenAI.APIError) return error.status === 429 || error.status === 408 || (error.status !== undefined && error.status >= 500);
  return false;
}

function retryAfterMs(error: unknown): number | null {
  if (!(error instanceof OpenAI.APIError) || !error.headers) return null;
  const seconds = Number(error.headers.get('retry-after'));
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : null;
}

/** A failed attempt costs tokens only when the model generated some before it failed (about a token a streamed chunk). */
function failedUsage(generated: number, promptEstimate: number): Usage {
  return generated > 0 ? { promptTokens: promptEstimate, completionTokens: generated, estimated: true } : { promptTokens: 0, completionTokens: 0, estimated: true };
}

function describe(error: unknown, baseUrl: string): string {
  if (error instanceof OpenAI.APIConnectionError) return `cannot reach ${baseUrl} (${error.message})`;
  if (error instanceof OpenAI.APIError) return `HTTP ${error.status ?? '?'} from ${baseUrl}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

/** Every model server, through the official openai SDK: streaming, AbortSignal, our own retries. */
export function createOpenAIModelClient(options: OpenAIModelClientOptions): ModelClient {
  const client = new OpenAI({ baseURL: options.baseUrl, apiKey: options.apiKey || 'not-needed', maxRetries: 0, timeout: 24 * 60 * 60 * 1000, fetch: httpFetch });
  const policy = options.retry ?? DEFAULT_RETRY_POLICY;

  async function attempt(request: ChatRequest, signal: AbortSignal, watchdog: StallWatchdog) {
    const body = {
      model: options.model,
      messages: request.messages.map(toWire),
      tools: toolsToWire(request),
      ...(request.maxTokens ? { max_tokens: request.maxTokens } : {}),
    };
    const sent = { signal: anySignal(signal, watchdog.signal), headers: { 'X-Archon-Purpose': request.purpose } };
    const assembled =
      options.streaming === false
        ? assembleCompletion(await client.chat.completions.create({ ...body, stream: false }, sent))
        : await assembleStream(watchdog.watch(await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } }, sent)));
    // A call the server's parser missed (left as text in the content or reasoning) is still a call.
    return { ...readModelTurn(assembled, request.tools), usage: assembled.usage };
  }

  /** One attempt under the stall watchdog; a stall is an error like a dropped connection. */
  async function watchedAttempt(request: ChatRequest, signal: AbortSignal, progress: { chunks: number }) {
    const watchdog = new StallWatchdog(policy.firstByteTimeoutMs, policy.idleTimeoutMs);
    try {
      return await attempt(request, signal, watchdog);
    } catch (error) {
      if (watchdog.stall && !signal.aborted) throw new StalledAttempt(watchdog.stall);
      throw error;
    } finally {
      progress.chunks = watchdog.chunks;
      watchdog.dispose();
    }
  }

  return {
    baseUrl: options.baseUrl,
    model: options.model,
    async chat(asked: ChatRequest, chatOptions: ChatOptions): Promise<ChatResponse> {
      const request = fitToContext(asked, options.context ?? null);
      const promptEstimate = estimateTokens(JSON.stringify(request.messages) + JSON.stringify(request.tools ?? []));
      const window = new RetryWindow(policy, options.clock ?? SYSTEM_CLOCK);
      for (let number = 1; number <= MAX_ATTEMPTS; number++) {
        chatOptions.signal.throwIfAborted();
        let result: Awaited<ReturnType<typeof watchedAttempt>>;
        const progress = { chunks: 0 };
        try {
          result = await watchedAttempt(request, chatOptions.signal, progress);
        } catch (error) {
          if (chatOptions.signal.aborted) {
            // A stopped answer still cost what it generated.
            if (progress.chunks > 0) chatOptions.onAttempt?.({ attempt: number, ok: false, usage: failedUsage(progress.chunks, promptEstimate), error: 'stopped' });
            throw cancelled(chatOptions.signal);
          }
          const reason = describe(error, options.baseUrl);
          chatOptions.onAttempt?.({ attempt: number, ok: false, usage: failedUsage(progress.chunks, promptEstimate), error: reason });
          const tries = number > 1 ? ` after ${number} attempts` : '';
          if (!isRetryable(error)) {
            throw new ArchonError('MODEL_CALL_FAILED', `The model call failed${tries}: ${reason}`, { cause: error, details: { status: error instanceof OpenAI.APIError ? error.status : undefined } });
          }
          if (!(await window.waitToRetry(retryAfterMs(error), chatOptions.signal))) throw modelUnavailable(options.baseUrl, window.elapsedMs(), number, reason, error);
          continue;
        }
        const usage: Usage = result.usage
          ? { promptTokens: result.usage.prompt_tokens, completionTokens: result.usage.completion_tokens, estimated: false }
          : { promptTokens: promptEstimate, completionTokens: estimateTokens(result.content + JSON.stringify(result.toolCalls)), estimated: true };
        chatOptions.onAttempt?.({ attempt: number, ok: true, usage });
        return { content: result.content, toolCalls: result.toolCalls, reasoning: result.reasoning, dialect: result.dialect, usage, attempts: number };
      }
      throw modelUnavailable(options.baseUrl, window.elapsedMs(), MAX_ATTEMPTS, 'too many attempts', null);
    },
  };
}
