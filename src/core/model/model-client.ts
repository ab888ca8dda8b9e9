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
import { noModelLoadedMessage, noModelLoadedReason } from './endpoint-probe';
import { fitToContext, promptTokens, TokenCalibration, type ContextWindow } from './context-window';
import { httpFetch } from './http-fetch';
import { cancelled, DEFAULT_RETRY_POLICY, MAX_ATTEMPTS, modelUnavailable, RetryWindow, SYSTEM_CLOCK, type RetryClock, type RetryPolicy } from './retry-policy';
import { StallWatchdog } from './stall-watchdog';
import { assembleCompletion, assembleStream } from './stream-assembler';
import { anySignal } from '../../shared/abort';
import { parseJsonOrUndefined } from '../../shared/json';
import { grammarSafeSchema, isGrammarRefusal } from './grammar-safe-schema';
import { textProtocolInstructions } from './text-protocol';

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

/**
 * A call's arguments as a server can render them back into the model's template: llama.cpp parses
 * them as JSON and fails the whole request when they are not (a call cut off at the token limit).
 * The tool's result that follows says what was wrong with what the model wrote.
 */
function renderableArguments(request: ChatRequest): ChatRequest {
  const renderable = (text: string) => (parseJsonOrUndefined(text) === undefined ? '{}' : text);
  const messages = request.messages.map((message) =>
    message.role === 'assistant' && message.toolCalls?.length ? { ...message, toolCalls: message.toolCalls.map((call) => ({ ...call, arguments: renderable(call.arguments) })) } : message,
  );
  return { ...request, messages };
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
  return request.tools.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: grammarSafeSchema(tool.parameters) } }));
}

/** What this server refused once: it is left out of later requests. */
interface Refused {
  toolChoice: boolean;
  responseFormat: boolean;
  /** A grammar from tools: later requests with tools go in the text protocol at once. */
  toolGrammar: boolean;
}

function requestBody(request: ChatRequest, model: string, refused: Refused) {
  const tools = toolsToWire(request);
  const schema = request.responseSchema;
  return {
    model,
    messages: request.messages.map(toWire),
    tools,
    ...(tools && request.toolChoice && !refused.toolChoice ? { tool_choice: request.toolChoice } : {}),
    ...(schema && !refused.responseFormat ? { response_format: { type: 'json_schema' as const, json_schema: { name: schema.name, schema: grammarSafeSchema(schema.schema) } } } : {}),
    ...(request.maxTokens ? { max_tokens: request.maxTokens } : {}),
  };
}

/** The same request in the text protocol: the tools described in the system message instead of sent. */
function inTextProtocol(request: ChatRequest): ChatRequest {
  const instructions = textProtocolInstructions(request.tools ?? []);
  const [first, ...rest] = request.messages;
  const messages: ChatMessage[] =
    first?.role === 'system' ? [{ role: 'system', content: `${first.content}\n\n${instructions}` }, ...rest] : [{ role: 'system', content: instructions }, ...request.messages];
  return { purpose: request.purpose, messages, ...(request.maxTokens ? { maxTokens: request.maxTokens } : {}) };
}

/**
 * A 400 for something the request could do without: an unsupported `tool_choice` or
 * `response_format` is left out from then on, and a grammar the server could not build from the
 * tools sends this request in the text protocol. Null when the refusal is about something else.
 */
function withoutRefused(error: unknown, request: ChatRequest, refused: Refused): ChatRequest | null {
  if (!(error instanceof OpenAI.APIError) || error.status !== 400) return null;
  const message = error.message;
  if (request.responseSchema && !refused.responseFormat && (/response_format|json_schema/i.test(message) || (isGrammarRefusal(message) && !request.tools))) {
    refused.responseFormat = true;
    return request;
  }
  if (request.toolChoice && request.tools && !refused.toolChoice && /tool_choice/i.test(message)) {
    refused.toolChoice = true;
    return request;
  }
  if (!request.tools || !isGrammarRefusal(message)) return null;
  refused.toolGrammar = true;
  return inTextProtocol(request);
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

/** A 500 that is the server failing on this request's content (llama.cpp's template and parser errors): the same request fails the same way. */
const REQUEST_CONTENT_FAILURE = /failed to parse|parse error|json\.exception|unable to generate parser|jinja|chat template/i;

function isRetryable(error: unknown): boolean {
  if (error instanceof StalledAttempt || isNetworkFailure(error)) return true;
  if (error instanceof OpenAI.APIUserAbortError) return false;
  if (error instanceof OpenAI.APIConnectionError) return true;
  if (error instanceof OpenAI.APIError) return error.status === 429 || error.status === 408 || (error.status !== undefined && error.status >= 500 && !REQUEST_CONTENT_FAILURE.test(error.message));
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
  // LM Studio unloaded the model mid-run: the probe's own clear words, not a bare HTTP status.
  const noModel = noModelLoadedReason(error);
  if (noModel) return noModelLoadedMessage(baseUrl, noModel);
  if (error instanceof OpenAI.APIError) return `HTTP ${error.status ?? '?'} from ${baseUrl}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

/** Every model server, through the official openai SDK: streaming, AbortSignal, our own retries. */
export function createOpenAIModelClient(options: OpenAIModelClientOptions): ModelClient {
  const client = new OpenAI({ baseURL: options.baseUrl, apiKey: options.apiKey || 'not-needed', maxRetries: 0, timeout: 24 * 60 * 60 * 1000, fetch: httpFetch });
  const policy = options.retry ?? DEFAULT_RETRY_POLICY;

  const refused: Refused = { toolChoice: false, responseFormat: false, toolGrammar: false };
  const calibration = new TokenCalibration();
  const fitted = (request: ChatRequest) => fitToContext(request, options.context ?? null, calibration.scale);

  /** llama.cpp's refusal of a prompt longer than its context names the prompt's real size: the estimate learns it, and the request is fitted again. */
  function learntFromOverflow(error: unknown, request: ChatRequest): boolean {
    const counted = error instanceof OpenAI.APIError ? /request \((\d+) tokens\) exceeds the available context size/i.exec(error.message)?.[1] : undefined;
    return counted !== undefined && calibration.learn(Number(counted), promptTokens(request.messages, request.tools));
  }

  async function attempt(request: ChatRequest, offered: ChatRequest['tools'], signal: AbortSignal, watchdog: StallWatchdog) {
    const body = requestBody(request, options.model, refused);
    const sent = { signal: anySignal(signal, watchdog.signal), headers: { 'X-Archon-Purpose': request.purpose } };
    const assembled =
      options.streaming === false
        ? assembleCompletion(await client.chat.completions.create({ ...body, stream: false }, sent))
        : await assembleStream(watchdog.watch(await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } }, sent)));
    // A call the server's parser missed (left as text in the content or reasoning) is still a call.
    const turn = readModelTurn(assembled, offered);
    // Sent in the text protocol after all: its final answer comes labelled.
    const content = offered && !request.tools ? turn.content.replace(/^\s*Final Answer\s*:\s*/i, '') : turn.content;
    return { ...turn, content, usage: assembled.usage };
  }

  /** One attempt under the stall watchdog; a stall is an error like a dropped connection. */
  async function watchedAttempt(request: ChatRequest, offered: ChatRequest['tools'], signal: AbortSignal, progress: { chunks: number }) {
    const watchdog = new StallWatchdog(policy.firstByteTimeoutMs, policy.idleTimeoutMs);
    try {
      return await attempt(request, offered, signal, watchdog);
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
      const renderable = renderableArguments(asked);
      let wire = refused.toolGrammar && renderable.tools?.length ? inTextProtocol(renderable) : renderable;
      let request = fitted(wire);
      const promptEstimate = estimateTokens(JSON.stringify(request.messages) + JSON.stringify(request.tools ?? []));
      const window = new RetryWindow(policy, options.clock ?? SYSTEM_CLOCK);
      for (let number = 1; number <= MAX_ATTEMPTS; number++) {
        chatOptions.signal.throwIfAborted();
        let result: Awaited<ReturnType<typeof watchedAttempt>>;
        const progress = { chunks: 0 };
        try {
          result = await watchedAttempt(request, asked.tools, chatOptions.signal, progress);
        } catch (error) {
          if (chatOptions.signal.aborted) {
            // A stopped answer still cost what it generated.
            if (progress.chunks > 0) chatOptions.onAttempt?.({ attempt: number, ok: false, usage: failedUsage(progress.chunks, promptEstimate), error: 'stopped' });
            throw cancelled(chatOptions.signal);
          }
          const reason = describe(error, options.baseUrl);
          chatOptions.onAttempt?.({ attempt: number, ok: false, usage: failedUsage(progress.chunks, promptEstimate), error: reason });
          const without = withoutRefused(error, wire, refused);
          if (without || learntFromOverflow(error, request)) {
            wire = without ?? wire;
            request = fitted(wire);
            continue;
          }
          const tries = number > 1 ? ` after ${number} attempts` : '';
          if (!isRetryable(error)) {
            throw new ArchonError('MODEL_CALL_FAILED', `The model call failed${tries}: ${reason}`, { cause: error, details: { status: error instanceof OpenAI.APIError ? error.status : undefined } });
          }
          if (!(await window.waitToRetry(retryAfterMs(error), chatOptions.signal))) throw modelUnavailable(options.baseUrl, window.elapsedMs(), number, reason, error);
          continue;
        }
        if (result.usage) calibration.learn(result.usage.prompt_tokens, promptTokens(request.messages, request.tools));
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
