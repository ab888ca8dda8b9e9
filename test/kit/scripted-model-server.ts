import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A scripted OpenAI-compatible server for tests and benchmarks, on loopback. It answers chat
 * completions (JSON or SSE, with tool calls), /models and /embeddings, and on demand: latency,
 * HTTP errors, malformed tool arguments, a server that rejects `tools` (as Ollama, vLLM, llama.cpp
 * or LM Studio word it), streaming quirks of real servers, reasoning fields, each server's report of
 * its context length, and replies that hang until the client aborts. Every request is logged for
 * the test to read.
 */

export interface ScriptedToolCall {
  name: string;
  /** A string is sent as is, so a test can send malformed JSON. */
  arguments: string | Record<string, unknown>;
  id?: string;
}

/**
 * How a streamed tool-call reply strays from OpenAI's format, as real servers do
 * (docs/model-protocol.md, "Server quirks"):
 * - `object-arguments` (llama.cpp): each call in one chunk, its arguments a JSON object;
 * - `repeated-name` (NVIDIA NIM): the function name in every chunk;
 * - `same-index` (Ollama): parallel calls each whole in one chunk, all with index 0;
 * - `no-index`: no index field, a new call known by its new id;
 * - `no-index-no-id`: no index and no id, a new call known by a new name or a complete JSON before it;
 * - `cumulative-arguments` (DeepSeek-compatible servers): each chunk re-sends the arguments so far;
 * - `repeated-final-arguments`: the whole arguments again in a last chunk.
 */
export type StreamQuirk = 'object-arguments' | 'repeated-name' | 'same-index' | 'no-index' | 'no-index-no-id' | 'cumulative-arguments' | 'repeated-final-arguments';

/** Reasoning sent apart from the content, under the field a server uses. */
export interface ScriptedReasoning {
  text: string;
  field?: 'reasoning_content' | 'reasoning';
}

/** Plain text goes out as `reasoning_content`, as llama.cpp and vLLM send it. */
type ReasoningReply = string | ScriptedReasoning;

export type ScriptedReply =
  | { content: string; toolCalls?: undefined; delayMs?: number; usage?: Usage; reasoning?: ReasoningReply }
  | { toolCalls: ScriptedToolCall[]; content?: string; delayMs?: number; usage?: Usage; quirk?: StreamQuirk; reasoning?: ReasoningReply }
  | { status: number; message?: string; delayMs?: number; retryAfterSeconds?: number }
  | { hang: true };

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
}

export interface RecordedRequest {
  path: string;
  body: ChatRequestBody;
  at: number;
  /** Archon's X-Archon-Purpose header: probe, plan, step or final. */
  purpose: string | null;
  /** Every header as received (Authorization included: tests check which key went where). */
  headers: IncomingHttpHeaders;
}

export interface ChatRequestBody {
  model?: string;
  messages?: { role: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string }[];
  tools?: { type: string; function: { name: string; parameters?: unknown } }[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  input?: string | string[];
  [key: string]: unknown;
}

/** A promise holds the request until it settles: the test acts while the client waits. */
export type Responder = (request: RecordedRequest, index: number) => ScriptedReply | Promise<ScriptedReply>;

/**
 * A real server's refusal of the probe's request with tools, with its own status and body
 * (docs/model-protocol.md, "Before a run: the probe", cites each source).
 */
export type ServerRefusal = 'ollama-no-tools' | 'vllm-no-auto-tool-choice' | 'llamacpp-no-jinja' | 'llamacpp-no-tools-stream' | 'llamacpp-old-no-jinja' | 'lmstudio-no-model';

const llamaCppError = (message: string) => ({ error: { code: 500, message, type: 'server_error' } });

const REFUSALS: Record<ServerRefusal, { status: number; body: (request: ChatRequestBody) => unknown; refuses: (body: ChatRequestBody) => boolean }> = {
  'ollama-no-tools': {
    status: 400,
    body: (request) => ({ error: { message: `registry.ollama.ai/library/${request.model ?? 'scripted'} does not support tools`, type: 'invalid_request_error', param: null, code: null } }),
    refuses: (body) => hasTools(body),
  },
  'vllm-no-auto-tool-choice': {
    status: 400,
    body: () => ({ object: 'error', message: '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set', type: 'BadRequestError', param: null, code: 400 }),
    refuses: (body) => hasTools(body),
  },
  'llamacpp-no-jinja': { status: 500, body: () => llamaCppError('tools param requires --jinja flag'), refuses: (body) => hasTools(body) },
  'llamacpp-no-tools-stream': { status: 500, body: () => llamaCppError('Cannot use tools with stream'), refuses: (body) => hasTools(body) && body.stream === true },
  /** An older llama.cpp without --jinja checks streaming first. */
  'llamacpp-old-no-jinja': {
    status: 500,
    body: (request) => llamaCppError(request.stream ? 'Cannot use tools with stream' : 'tools param requires --jinja flag'),
    refuses: (body) => hasTools(body),
  },
  'lmstudio-no-model': {
    status: 404,
    body: () => ({ error: { message: "No models loaded. Please load a model in the developer page or use the 'lms load' command.", type: 'invalid_request_error', param: 'model', code: 'model_not_found' } }),
    refuses: () => true,
  },
};

function hasTools(body: ChatRequestBody): boolean {
  return (body.tools?.length ?? 0) > 0;
}

export interface ModelServerOptions {
  /**
   * A queue of replies (one per chat request, in order) or a function of the request. Archon's
   * endpoint probes (X-Archon-Purpose: probe) are answered apart and never consume the script.
   */
  reply: ScriptedReply[] | Responder;
  latencyMs?: number;
  rejectTools?: boolean;
  /** Refuse requests as this real server does. */
  refuse?: ServerRefusal;
  /** LM Studio's answer while a model fails to load (HTTP 400 "Failed to load model"), to the first this many requests with tools. */
  loadFailures?: number;
  /** llama.cpp's answer while it loads the model (HTTP 503 "Loading model"), to the first this many chat requests. */
  loading?: number;
  models?: string[];
  /** The context length as Ollama (/api/show), LM Studio (/api/v0/models) or vLLM (max_model_len in /v1/models) report it. */
  reportsContext?: { server: 'ollama'; modelMax: number; numCtx?: number } | { server: 'lmstudio'; loaded: number } | { server: 'vllm'; maxModelLen: number };
  /** llama.cpp's /props and /slots, when set. */
  llamaCpp?: { contextLength: number; slots: number };
  embeddingDimensions?: number;
  /**
   * How /v1/embeddings answers: `hashed` (default), a vector per whole text; `bag-of-words`, the sum of
   * a vector per word, so texts that share words are similar; `unavailable`, HTTP 404 as a server
   * without an embedding model answers.
   */
  embeddings?: 'hashed' | 'bag-of-words' | 'unavailable';
  /** Listen on this port (a server restarted where the old one was); any free port when unset. */
  port?: number;
  /**
   * How Archon's outcome check (X-Archon-Purpose: outcome) is answered: by default apart from the script
   * with a passing verdict (so a script written for the plan, steps and answer runs as written); `script`
   * sends it through `reply` like any request; a responder answers it itself.
   */
  outcome?: 'script' | Responder;
  /** The same for the Perceiver's goal contract (X-Archon-Purpose: contract): by default a contract with no criteria of the model's own. */
  contract?: 'script' | Responder;
}

export interface ScriptedModelServer {
  /** The OpenAI base URL, ending in /v1. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  readonly chatRequests: RecordedRequest[];
  readonly stats: { inFlight: number; maxInFlight: number; aborted: number };
  /** How many requests came with each X-Archon-Purpose (probe, plan, step, critic, final…). */
  countByPurpose(): Record<string, number>;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function parseBody(raw: string): ChatRequestBody | null {
  try {
    return raw ? (JSON.parse(raw) as ChatRequestBody) : {};
  } catch {
    return null;
  }
}

function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

/** What a chat request is answered with, streamed or whole. */
interface Answer {
  content?: string;
  toolCalls?: ScriptedToolCall[];
  usage?: Usage;
  quirk?: StreamQuirk;
  reasoning?: ReasoningReply;
}

function reasoningOf(reply: Answer): ScriptedReasoning | null {
  if (!reply.reasoning) return null;
  return typeof reply.reasoning === 'string' ? { text: reply.reasoning } : reply.reasoning;
}

function usageFor(body: ChatRequestBody, reply: Answer): Usage & { total_tokens: number } {
  const usage = reply.usage ?? {
    prompt_tokens: estimateTokens(JSON.stringify(body.messages ?? [])),
    completion_tokens: estimateTokens(reply.content ?? ' '),
  };
  return { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
}

function toolCallsOf(reply: { toolCalls?: ScriptedToolCall[] }) {
  return (reply.toolCalls ?? []).map((call, index) => ({
    id: call.id ?? `call_${index}_${Math.random().toString(36).slice(2, 10)}`,
    type: 'function' as const,
    function: { name: call.name, arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments) },
  }));
}

function reasoningField(reply: Answer): Record<string, string> {
  const reasoning = reasoningOf(reply);
  return reasoning ? { [reasoning.field ?? 'reasoning_content']: reasoning.text } : {};
}

function writeCompletion(response: ServerResponse, body: ChatRequestBody, reply: Answer): void {
  const toolCalls = toolCallsOf(reply).map((call) =>
    reply.quirk === 'object-arguments' ? { ...call, function: { ...call.function, arguments: JSON.parse(call.function.arguments) as unknown } } : call,
  );
  json(response, 200, {
    id: `chatcmpl-${Date.now()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: body.model ?? 'scripted',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: reply.content ?? null, ...reasoningField(reply), ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
        finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
      },
    ],
    usage: usageFor(body, reply),
  });
}

type WireToolCall = ReturnType<typeof toolCallsOf>[number];

/** Text in three pieces (at least one), as a server streams it. */
function pieces(text: string): string[] {
  const size = Math.max(1, Math.ceil(text.length / 3));
  const parts: string[] = [];
  for (let offset = 0; offset < text.length; offset += size) parts.push(text.slice(offset, offset + size));
  return parts.length > 0 ? parts : [''];
}

/** The `tool_calls` entry of each chunk, call after call, the way the quirk has it. */
function toolCallDeltas(calls: WireToolCall[], quirk: StreamQuirk | undefined): Record<string, unknown>[] {
  return calls.flatMap((call, index) => {
    const { name, arguments: args } = call.function;
    const head = { id: call.id, type: 'function' };
    const chunked = (each: (piece: string, n: number, all: string[]) => Record<string, unknown>) => pieces(args).map(each);
    switch (quirk) {
      case 'object-arguments':
        return [{ index, ...head, function: { name, arguments: JSON.parse(args) as unknown } }];
      case 'same-index':
        return [{ index: 0, ...head, function: { name, arguments: args } }];
      case 'repeated-name':
        return chunked((piece, n) => ({ index, ...(n === 0 ? head : {}), function: { name, arguments: piece } }));
      case 'no-index':
        return chunked((piece, n) => (n === 0 ? { ...head, function: { name, arguments: piece } } : { function: { arguments: piece } }));
      case 'no-index-no-id':
        return chunked((piece, n) => ({ function: { ...(n === 0 ? { name } : {}), arguments: piece } }));
      case 'cumulative-arguments':
        return chunked((_, n, all) => ({ index, ...(n === 0 ? head : {}), function: { ...(n === 0 ? { name } : {}), arguments: all.slice(0, n + 1).join('') } }));
      default: {
        const parts = chunked((piece, n) => ({ index, ...(n === 0 ? head : {}), function: { ...(n === 0 ? { name } : {}), arguments: piece } }));
        return quirk === 'repeated-final-arguments' ? [...parts, { index, function: { arguments: args } }] : parts;
      }
    }
  });
}

function writeStream(response: ServerResponse, body: ChatRequestBody, reply: Answer): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const base = { id: `chatcmpl-${Date.now()}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: body.model ?? 'scripted' };
  const send = (choices: unknown[], extra: Record<string, unknown> = {}) => response.write(`data: ${JSON.stringify({ ...base, choices, ...extra })}\n\n`);
  const delta = (fields: Record<string, unknown>) => send([{ index: 0, delta: fields, finish_reason: null }]);
  delta({ role: 'assistant', content: '' });
  const reasoning = reasoningOf(reply);
  if (reasoning) for (const piece of pieces(reasoning.text)) delta({ [reasoning.field ?? 'reasoning_content']: piece });
  const content = reply.content ?? '';
  for (let offset = 0; offset < content.length; offset += 8) delta({ content: content.slice(offset, offset + 8) });
  const toolCalls = toolCallsOf(reply);
  for (const part of toolCallDeltas(toolCalls, reply.quirk)) delta({ tool_calls: [part] });
  send([{ index: 0, delta: {}, finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop' }]);
  if (body.stream_options?.include_usage) send([], { usage: usageFor(body, reply) });
  response.end('data: [DONE]\n\n');
}

function normalised(values: number[]): number[] {
  const norm = Math.hypot(...values) || 1;
  return values.map((value) => value / norm);
}

/** The sum of a hashed vector per word (lower-cased): texts that share words point the same way. */
function wordsEmbedding(text: string, dimensions: number): number[] {
  const sum = new Array<number>(dimensions).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) hashedEmbedding(word, dimensions).forEach((value, index) => (sum[index] = (sum[index] ?? 0) + value));
  return normalised(sum);
}

function hashedEmbedding(text: string, dimensions: number): number[] {
  const values: number[] = [];
  let block = createHash('sha256').update(text).digest();
  while (values.length < dimensions) {
    for (const byte of block) if (values.length < dimensions) values.push(byte / 127.5 - 1);
    block = createHash('sha256').update(block).digest();
  }
  return normalised(values);
}

/** A structured answer through the offered tool, or as its labelled line in text mode. */
function structuredReply(body: ChatRequestBody, tool: string, label: string, value: Record<string, unknown>): ScriptedReply {
  const native = body.tools?.some((offered) => offered.function.name === tool) ?? false;
  return native ? { toolCalls: [{ name: tool, arguments: value }] } : { content: `${label}: ${JSON.stringify(value)}` };
}

/** The outcome check's verdict (the goal is met), or a contract adding nothing to what Archon read from the goal: what a test that does not script them gets. */
function bookkeepingReply(recorded: RecordedRequest): ScriptedReply {
  if (recorded.purpose === 'outcome') return structuredReply(recorded.body, 'submit_verdict', 'Verdict', { verdict: 'pass', gap: 0, reason: 'The scripted outcome check finds the goal met.', confidence: 1 });
  const asked = recorded.body.messages?.find((message) => message.role === 'user')?.content;
  const goal = typeof asked === 'string' ? asked.replace(/^Goal:\s*/, '') : 'the goal';
  return structuredReply(recorded.body, 'submit_contract', 'Contract', { goal, success_criteria: [], deliverables: [], constraints: [], out_of_scope: [] });
}

export async function startModelServer(options: ModelServerOptions): Promise<ScriptedModelServer> {
  const requests: RecordedRequest[] = [];
  const chatRequests: RecordedRequest[] = [];
  const stats = { inFlight: 0, maxInFlight: 0, aborted: 0 };
  const queue = Array.isArray(options.reply) ? [...options.reply] : null;
  const models = options.models ?? ['scripted-model'];

  const nextReply = (recorded: RecordedRequest, index: number): ScriptedReply | Promise<ScriptedReply> => {
    const own = answeredApart(recorded);
    if (own) return own === 'default' ? bookkeepingReply(recorded) : own(recorded, index);
    if (queue) return queue.shift() ?? { status: 500, message: `The scripted server ran out of replies at chat request ${index + 1}.` };
    return (options.reply as Responder)(recorded, index);
  };

  /** How a contract or outcome request is answered when the test's script does not take it. */
  const answeredApart = (recorded: RecordedRequest): Responder | 'default' | null => {
    const chosen = recorded.purpose === 'outcome' ? options.outcome : recorded.purpose === 'contract' ? options.contract : 'script';
    if (chosen === 'script') return null;
    return chosen ?? 'default';
  };

  let loadFailures = options.loadFailures ?? 0;
  let loading = options.loading ?? 0;

  async function chat(response: ServerResponse, recorded: RecordedRequest): Promise<void> {
    const body = recorded.body;
    if (options.rejectTools && hasTools(body)) {
      json(response, 400, { error: { message: 'Unrecognized request argument supplied: tools', type: 'invalid_request_error' } });
      return;
    }
    const refusal = options.refuse ? REFUSALS[options.refuse] : null;
    if (refusal?.refuses(body)) return json(response, refusal.status, refusal.body(body));
    if (loading > 0) {
      loading--;
      return json(response, 503, { error: { code: 503, message: 'Loading model', type: 'unavailable_error' } });
    }
    if (loadFailures > 0 && hasTools(body)) {
      loadFailures--;
      return json(response, 400, { error: { message: `Failed to load model "${body.model ?? 'scripted'}". Error: Model loading was stopped due to insufficient system resources.` } });
    }
    if (recorded.purpose === 'probe') {
      if (body.stream) writeStream(response, body, { content: '' });
      else writeCompletion(response, body, { content: '' });
      return;
    }
    const index = answeredApart(recorded) ? -1 : chatRequests.push(recorded) - 1;
    const reply = await nextReply(recorded, index);
    stats.inFlight++;
    stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
    const closed = new Promise<'closed'>((resolve) => response.on('close', () => resolve('closed')));
    try {
      if ('hang' in reply) {
        await closed;
        stats.aborted++;
        return;
      }
      const delay = (options.latencyMs ?? 0) + (reply.delayMs ?? 0);
      if (delay > 0 && (await Promise.race([sleep(delay).then(() => 'slept' as const), closed])) === 'closed') {
        stats.aborted++;
        return;
      }
      if ('status' in reply) {
        if (reply.retryAfterSeconds !== undefined) response.setHeader('retry-after', String(reply.retryAfterSeconds));
        json(response, reply.status, { error: { message: reply.message ?? `Scripted HTTP ${reply.status}`, type: 'server_error' } });
      } else if (body.stream) {
        writeStream(response, body, reply);
      } else {
        writeCompletion(response, body, reply);
      }
    } finally {
      stats.inFlight--;
    }
  }

  const server = createServer((request, response) => {
    void (async () => {
      const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
      const body = parseBody(request.method === 'POST' ? await readBody(request) : '');
      if (body === null) {
        json(response, 400, { error: { message: 'Request body is not JSON.' } });
        return;
      }
      const purposeHeader = request.headers['x-archon-purpose'];
      const recorded: RecordedRequest = { path, body, at: Date.now(), purpose: typeof purposeHeader === 'string' ? purposeHeader : null, headers: request.headers };
      requests.push(recorded);
      if (path === '/v1/chat/completions' && request.method === 'POST') return chat(response, recorded);
      const reported = options.reportsContext;
      if (path === '/v1/models') {
        const extra = reported?.server === 'vllm' ? { max_model_len: reported.maxModelLen } : {};
        // llama.cpp names itself as the owner of its models.
        return json(response, 200, { object: 'list', data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: options.llamaCpp ? 'llamacpp' : 'scripted', ...extra })) });
      }
      if (reported?.server === 'ollama' && path === '/api/show' && request.method === 'POST') {
        const parameters = reported.numCtx ? `num_ctx                        ${reported.numCtx}\nstop                           "<|eot_id|>"` : 'stop                           "<|eot_id|>"';
        return json(response, 200, { modelfile: '# scripted', parameters, details: { family: 'llama' }, model_info: { 'general.architecture': 'llama', 'llama.context_length': reported.modelMax }, capabilities: ['completion', 'tools'] });
      }
      if (reported?.server === 'lmstudio' && path === '/api/v0/models') {
        return json(response, 200, { object: 'list', data: models.map((id) => ({ id, object: 'model', type: 'llm', state: 'loaded', max_context_length: 131072, loaded_context_length: reported.loaded })) });
      }
      if (path === '/v1/embeddings' && request.method === 'POST') {
        if (options.embeddings === 'unavailable') return json(response, 404, { error: { message: `model "${String(body.model)}" not found, try pulling it first`, type: 'api_error' } });
        const inputs = Array.isArray(body.input) ? body.input : [body.input ?? ''];
        const dimensions = options.embeddingDimensions ?? 384;
        const embedding = options.embeddings === 'bag-of-words' ? wordsEmbedding : hashedEmbedding;
        return json(response, 200, {
          object: 'list',
          model: body.model ?? 'scripted-embedding',
          data: inputs.map((text, index) => ({ object: 'embedding', index, embedding: embedding(String(text), dimensions) })),
          usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
        });
      }
      if (options.llamaCpp && path === '/props') return json(response, 200, { default_generation_settings: { n_ctx: options.llamaCpp.contextLength }, total_slots: options.llamaCpp.slots });
      if (options.llamaCpp && path === '/slots') return json(response, 200, Array.from({ length: options.llamaCpp.slots }, (_, id) => ({ id, n_ctx: options.llamaCpp?.contextLength, is_processing: false })));
      json(response, 404, { error: { message: `No route ${request.method} ${path} on the scripted server.` } });
    })();
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    chatRequests,
    stats,
    countByPurpose() {
      const counts: Record<string, number> = {};
      for (const { purpose } of requests) if (purpose !== null) counts[purpose] = (counts[purpose] ?? 0) + 1;
      return counts;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The text of every message of a request, joined: what a test searches for a step's description. */
export function requestText(request: RecordedRequest): string {
  return (request.body.messages ?? []).map((message) => (typeof message.content === 'string' ? message.content : JSON.stringify(message.content ?? ''))).join('\n');
}

/** The failure reason a re-plan request gives, verbatim, whether fenced as data or not; null when it gives none. */
export function replanFailureReason(request: RecordedRequest): string | null {
  return /^Failure reason: (?:⟦data [0-9a-f]{12} from [^⟧]+⟧\n)?([^]*?)(?:\n⟦\/data [0-9a-f]{12}⟧)?\n\n/m.exec(requestText(request))?.[1] ?? null;
}

/** The step id a step request is about (from "Step <id>: …" in Archon's brief), or null. */
export function stepIdOf(request: RecordedRequest): string | null {
  return /^Step ([^:\n]+):/m.exec(requestText(request))?.[1] ?? null;
}

/** Archon's fence around untrusted text (spotlighting): `⟦data NONCE from SOURCE⟧` … `⟦/data NONCE⟧` (the end cut off when the context was too small for it). */
const FENCE = /^((?:error|timeout|denied|cancelled): )?⟦data [0-9a-f]+ from [^\n]*⟧\n([\s\S]*?)(?:\n⟦\/data [0-9a-f]+⟧)?$/;

/** A tool message as the tool said it: the fence Archon put around untrusted text taken off (a failure's status kept). */
export function unfenced(content: string): string {
  const fence = FENCE.exec(content);
  return fence ? `${fence[1] ?? ''}${fence[2] ?? ''}` : content;
}

/** The tool messages of a request, as the tools said them (see `unfenced`). */
export function toolMessagesOf(request: RecordedRequest): string[] {
  return (request.body.messages ?? []).filter((message) => message.role === 'tool').map((message) => unfenced(String(message.content)));
}

export interface PlanStepScript {
  id: string;
  /** A sub-agent step may leave it out (Archon fills it from `goal`). */
  description?: string;
  dependencies?: string[];
  kind?: 'task' | 'subagent';
  goal?: string;
  tool?: string;
  args?: Record<string, unknown>;
  expected_output?: string;
  role?: string;
}

/** A submit_plan tool call with these steps. */
export function planReply(steps: PlanStepScript[], goal = 'goal'): ScriptedReply {
  return { toolCalls: [{ name: 'submit_plan', arguments: { goal, steps: steps.map((step) => ({ dependencies: [], ...step })) } }] };
}
