import OpenAI from 'openai';
import { ArchonError } from '../../shared/errors';
import { parseJsonOrUndefined } from '../../shared/json';
import type { EndpointProbe } from '../../shared/schemas/endpoint';
import { discoverContextLength } from './context-length';
import { abortableSleep } from './retry-policy';
import { observedFetch, type RequestSink } from './server-request';

export interface ProbeOptions {
  baseUrl: string;
  apiKey?: string;
  model?: string;
  /** The operator's context length, for servers that do not report theirs. */
  contextLength?: number | null;
  signal: AbortSignal;
  /** Told of every request the server received, each with X-Archon-Purpose: probe. */
  onRequest?: RequestSink;
}

const PROBE_TOOL = {
  type: 'function' as const,
  function: { name: 'noop', description: 'Does nothing.', parameters: { type: 'object', properties: {} } },
};

function unreachable(baseUrl: string, reason: string, cause: unknown): ArchonError {
  return new ArchonError(
    'MODEL_UNREACHABLE',
    `Cannot reach the model server at ${baseUrl} (${reason}). Start it (for Ollama: \`ollama serve\`), ` +
      'or pass --model-url with its address (LM Studio: http://127.0.0.1:1234/v1, llama.cpp: http://127.0.0.1:8080/v1).',
    { cause },
  );
}

/** What a server that is not an OpenAI-compatible model server sent instead: an HTML page, other JSON, other text. */
function describeBody(body: string, expected: string): string {
  const text = body.trim();
  if (text.startsWith('<')) {
    const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1]?.trim();
    return `an HTML page${title ? ` ("${title.slice(0, 80)}")` : ''}`;
  }
  if (parseJsonOrUndefined(text) !== undefined) return `JSON without \`${expected}\``;
  return text ? `text that is not JSON ("${text.slice(0, 80)}")` : 'an empty answer';
}

function notModelServer(baseUrl: string, request: string, body: string, expected: string): ArchonError {
  return new ArchonError(
    'CONFIG_INVALID',
    `The server at ${baseUrl} is not an OpenAI-compatible model server: ${request} answered ${describeBody(body, expected)}. ` +
      'Check the address (it usually ends in /v1) or use a preset: ollama, lm-studio, llama-cpp, vllm, openai.',
  );
}

/** The body of the last answer a client received, for telling a model server from another HTTP server. */
function recordingFetch(observed: typeof fetch): { fetch: typeof fetch; lastBody: () => string } {
  let lastBody = '';
  return {
    fetch: async (url, init) => {
      const response = await observed(url, init);
      const streamed = (response.headers.get('content-type') ?? '').includes('text/event-stream');
      lastBody = streamed ? '' : await response.clone().text();
      return response;
    },
    lastBody: () => lastBody,
  };
}

const isJsonWith = (body: string, key: string) => {
  const parsed = parseJsonOrUndefined(body);
  return typeof parsed === 'object' && parsed !== null && key in parsed;
};

/** A page where a model server answers in JSON: an HTML page, or a non-JSON "not found" (a 5xx in plain text may be a model still loading). */
const answeredOtherThanModel = (status: number | undefined, body: string) =>
  parseJsonOrUndefined(body) === undefined && (body.trim().startsWith('<') || status === 404 || status === 405);

/** The server's model entries as sent: vLLM adds max_model_len to each. */
async function listModels(baseUrl: string, apiKey: string | undefined, signal: AbortSignal, observed: typeof fetch): Promise<(Record<string, unknown> & { id: string })[]> {
  const recorder = recordingFetch(observed);
  const client = new OpenAI({ baseURL: baseUrl, apiKey: apiKey || 'not-needed', maxRetries: 0, fetch: recorder.fetch });
  try {
    const page = await client.models.list({ signal, timeout: 5000 });
    const noModel = isJsonWith(recorder.lastBody(), 'error') ? noModelLoadedReason(null, recorder.lastBody()) : null;
    if (noModel) throw noModelLoaded(baseUrl, noModel, null);
    if (!isJsonWith(recorder.lastBody(), 'data')) throw notModelServer(baseUrl, 'GET /models', recorder.lastBody(), 'data');
    return page.data.map((model) => model as unknown as Record<string, unknown> & { id: string });
  } catch (error) {
    if (signal.aborted || ArchonError.isInstance(error)) throw error;
    if (error instanceof OpenAI.APIConnectionError) throw unreachable(baseUrl, error.message, error);
    const noModel = noModelLoadedReason(error, recorder.lastBody());
    if (noModel) throw noModelLoaded(baseUrl, noModel, error);
    if (error instanceof OpenAI.AuthenticationError || error instanceof OpenAI.PermissionDeniedError) {
      throw new ArchonError('CONFIG_INVALID', `The model server at ${baseUrl} refused the API key (HTTP ${error.status}). Pass --api-key or set OPENAI_API_KEY.`, { cause: error });
    }
    if (error instanceof OpenAI.NotFoundError) {
      if (answeredOtherThanModel(404, recorder.lastBody())) throw notModelServer(baseUrl, 'GET /models', recorder.lastBody(), 'data');
      return [];
    }
    throw unreachable(baseUrl, error instanceof Error ? error.message : String(error), error);
  }
}

function chooseModel(requested: string | undefined, models: string[], baseUrl: string): string {
  if (requested) {
    const known = models.length === 0 || models.some((name) => name === requested || name.startsWith(`${requested}:`));
    if (!known) {
      throw new ArchonError('CONFIG_INVALID', `The model "${requested}" is not served by ${baseUrl}. Available: ${models.slice(0, 20).join(', ')}. Pass --model with one of them.`);
    }
    return requested;
  }
  const first = models[0];
  if (!first) throw new ArchonError('CONFIG_INVALID', `The model server at ${baseUrl} lists no models. Load one (for Ollama: \`ollama pull llama3.1\`) or pass --model.`);
  return first;
}

/** What the probe's request with tools showed: native tool calls (streamed or whole), or the text protocol, and why. */
interface ToolSupport {
  toolCalling: boolean;
  streaming: boolean;
  reason: string | null;
}

type Refusal = { kind: 'text' | 'whole' | 'no-model' | 'transient'; reason: string };

/** Each server's own words for refusing tools (docs/model-protocol.md cites where each comes from). */
const REFUSALS: { pattern: RegExp; refusal: (message: string) => Refusal }[] = [
  { pattern: /does not support tools/i, refusal: (message) => ({ kind: 'text', reason: `the model cannot call tools on this server ("${message}"); pick a model with tool support for native calls` }) },
  {
    pattern: /tool choice requires --enable-auto-tool-choice/i,
    refusal: () => ({ kind: 'text', reason: 'vLLM was started without tool calling; restart it with --enable-auto-tool-choice --tool-call-parser <parser> for native calls' }),
  },
  { pattern: /tools param requires --jinja/i, refusal: () => ({ kind: 'text', reason: 'llama.cpp was started without --jinja ("tools param requires --jinja flag"); restart llama-server with --jinja for native calls' }) },
  { pattern: /cannot use tools with stream/i, refusal: () => ({ kind: 'whole', reason: 'this llama.cpp cannot stream with tools ("Cannot use tools with stream"); requests are sent whole' }) },
  // LM Studio, in its versions' words: "No models loaded. Please load a model … or use the `lms load` command.", "No model is loaded", "Model unloaded".
  { pattern: /no models? (?:is |are )?(?:currently )?loaded|\bmodel (?:was |has been |is )?unloaded|please load a model|`?lms load`? command/i, refusal: (message) => ({ kind: 'no-model', reason: message }) },
  { pattern: /failed to load model|model is (still )?loading|loading model/i, refusal: (message) => ({ kind: 'transient', reason: message }) },
];

/** Failed loads and 5xx are tried again this many times before the probe decides. */
const PROBE_RETRIES = 2;
const PROBE_RETRY_DELAY_MS = 500;

/** The server's own words: `{"error": {"message"}}` (OpenAI, Ollama, llama.cpp, LM Studio), `{"message"}` (older vLLM), else the client's. */
function serverMessage(error: unknown, body: string): string {
  const parsed = parseJsonOrUndefined(body) as { error?: { message?: unknown } | string; message?: unknown } | undefined;
  const message = (parsed?.error && typeof parsed.error === 'object' ? parsed.error.message : parsed?.error) ?? parsed?.message;
  if (typeof message === 'string') return message;
  return error instanceof Error ? error.message : String(error);
}

function classify(error: unknown, body: string): Refusal | null {
  const message = serverMessage(error, body);
  const known = REFUSALS.find(({ pattern }) => pattern.test(message));
  if (known) return known.refusal(message);
  if (error instanceof OpenAI.APIConnectionError) return { kind: 'transient', reason: message };
  if (!(error instanceof OpenAI.APIError)) return null;
  const status = error.status ?? 0;
  if ([400, 422, 501].includes(status)) return { kind: 'text', reason: `the server refused a request with tools (HTTP ${status}: ${message})` };
  return status >= 500 ? { kind: 'transient', reason: message } : null;
}

/** The model's one-token answer to a request with a no-op tool, streamed as runs stream, or whole; false when it held no `choices`. */
async function requestWithTools(client: OpenAI, model: string, streaming: boolean, signal: AbortSignal): Promise<boolean> {
  const body = { model, messages: [{ role: 'user' as const, content: 'ping' }], tools: [PROBE_TOOL], max_tokens: 1 };
  const sent = { signal, timeout: 60_000 };
  if (!streaming) {
    const answer: unknown = await client.chat.completions.create({ ...body, stream: false }, sent);
    return typeof answer === 'object' && answer !== null && Array.isArray((answer as { choices?: unknown }).choices);
  }
  const stream = await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } }, sent);
  let answered = false;
  for await (const chunk of stream) answered ||= Array.isArray((chunk as { choices?: unknown }).choices);
  return answered;
}

/** What Archon says when a server has no model loaded: the server's words and how to load one. */
export function noModelLoadedMessage(baseUrl: string, message: string): string {
  return `The model server at ${baseUrl} has no model loaded ("${message}"). Load one (LM Studio: the Developer page, or \`lms load <model>\`) and run again.`;
}

function noModelLoaded(baseUrl: string, message: string, cause: unknown): ArchonError {
  return new ArchonError('CONFIG_INVALID', noModelLoadedMessage(baseUrl, message), { cause });
}

/**
 * The server's words when an answer (a failed request, or a body of `{"error": …}` instead of the
 * expected JSON) says no model is loaded; null otherwise. The SDK keeps the body's `error` on the error.
 */
export function noModelLoadedReason(error: unknown, body = ''): string | null {
  const kept = error instanceof OpenAI.APIError && error.error !== undefined ? JSON.stringify({ error: error.error }) : '';
  const refusal = classify(error, body || kept);
  return refusal?.kind === 'no-model' ? refusal.reason : null;
}

/** Asks with tools, then reads a refusal: text mode, whole requests, no model, or try again (bounded). */
async function probeToolSupport(baseUrl: string, apiKey: string | undefined, model: string, signal: AbortSignal, observed: typeof fetch): Promise<ToolSupport> {
  const recorder = recordingFetch(observed);
  const client = new OpenAI({ baseURL: baseUrl, apiKey: apiKey || 'not-needed', maxRetries: 0, fetch: recorder.fetch });
  let streaming = true;
  let whyWhole: string | null = null;
  // Bounded: streaming is given up at most once, and a transient failure is tried again PROBE_RETRIES times.
  for (let retries = 0; ; ) {
    try {
      if (!(await requestWithTools(client, model, streaming, signal))) {
        const noModel = noModelLoadedReason(null, recorder.lastBody());
        throw noModel ? noModelLoaded(baseUrl, noModel, null) : notModelServer(baseUrl, 'POST /chat/completions', recorder.lastBody(), 'choices');
      }
      return { toolCalling: true, streaming, reason: whyWhole };
    } catch (error) {
      if (signal.aborted || ArchonError.isInstance(error)) throw error;
      if (error instanceof OpenAI.APIError && answeredOtherThanModel(error.status, recorder.lastBody())) {
        throw notModelServer(baseUrl, 'POST /chat/completions', recorder.lastBody(), 'choices');
      }
      const refusal = classify(error, recorder.lastBody());
      if (refusal?.kind === 'whole' && streaming) {
        streaming = false;
        whyWhole = refusal.reason;
      } else if (refusal?.kind === 'text') return { toolCalling: false, streaming: true, reason: `text protocol: ${refusal.reason}` };
      else if (refusal?.kind === 'no-model') throw noModelLoaded(baseUrl, refusal.reason, error);
      else if (refusal?.kind === 'transient' && retries < PROBE_RETRIES) await abortableSleep(PROBE_RETRY_DELAY_MS * 2 ** retries++, signal);
      else throw new ArchonError('MODEL_CALL_FAILED', `The model server at ${baseUrl} failed a test request: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }
}

/** Before a run: is the server there, which model, can it call tools (and stream them), how big and how parallel is it. */
export async function probeEndpoint(options: ProbeOptions): Promise<EndpointProbe> {
  const calls = observedFetch('probe', options.onRequest);
  // An endpoint a server does not have (404, 405) answers the question asked of it: this is not that kind of server.
  const discovery = observedFetch('probe', options.onRequest, (status) => status < 500);
  try {
    const listed = await listModels(options.baseUrl, options.apiKey, options.signal, calls.fetch);
    const models = listed.map((entry) => entry.id);
    const model = chooseModel(options.model, models, options.baseUrl);
    const [tools, context] = await Promise.all([
      probeToolSupport(options.baseUrl, options.apiKey, model, options.signal, calls.fetch),
      discoverContextLength({ baseUrl: options.baseUrl, model, listed: listed.find((entry) => entry.id === model), configured: options.contextLength ?? null, signal: options.signal, fetch: discovery.fetch }),
    ]);
    return { baseUrl: options.baseUrl, models, model, ...tools, ...context };
  } finally {
    await Promise.all([calls.settled(), discovery.settled()]);
  }
}

/** Failures a fresh probe would have foreseen: the model gone, tools refused, or a context smaller than the probe found. */
const PROBE_WOULD_CATCH = [...REFUSALS.map(({ pattern }) => pattern), /context (length|size|window)|n_ctx|maximum context|too many tokens|model .*not (found|exist)|no such model|model_not_found/i];

export function probeWouldCatch(error: unknown): boolean {
  if (!ArchonError.isInstance(error)) return false;
  if (error.code === 'CONTEXT_TOO_SMALL') return true;
  if (error.code !== 'MODEL_CALL_FAILED') return false;
  return (error.details as { status?: unknown } | undefined)?.status === 404 || PROBE_WOULD_CATCH.some((pattern) => pattern.test(error.message));
}
