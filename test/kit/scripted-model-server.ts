import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A scripted OpenAI-compatible server for tests and benchmarks, on loopback. It answers chat
 * completions (JSON or SSE, with tool calls), /models and /embeddings, and on demand: latency,
 * HTTP errors, malformed tool arguments, a server that rejects `tools`, and replies that hang
 * until the client aborts. Every request is logged for the test to read.
 */

export interface ScriptedToolCall {
  name: string;
  /** A string is sent as is, so a test can send malformed JSON. */
  arguments: string | Record<string, unknown>;
  id?: string;
}

export type ScriptedReply =
  | { content: string; toolCalls?: undefined; delayMs?: number; usage?: Usage }
  | { toolCalls: ScriptedToolCall[]; content?: string; delayMs?: number; usage?: Usage }
  | { status: number; message?: string; delayMs?: number }
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

export type Responder = (request: RecordedRequest, index: number) => ScriptedReply;

export interface ModelServerOptions {
  /**
   * A queue of replies (one per chat request, in order) or a function of the request. Archon's
   * endpoint probes (X-Archon-Purpose: probe) are answered apart and never consume the script.
   */
  reply: ScriptedReply[] | Responder;
  latencyMs?: number;
  rejectTools?: boolean;
  models?: string[];
  /** llama.cpp's /props and /slots, when set. */
  llamaCpp?: { contextLength: number; slots: number };
  embeddingDimensions?: number;
}

export interface ScriptedModelServer {
  /** The OpenAI base URL, ending in /v1. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  readonly chatRequests: RecordedRequest[];
  readonly stats: { inFlight: number; maxInFlight: number; aborted: number };
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

function usageFor(body: ChatRequestBody, reply: { content?: string; usage?: Usage }): Usage & { total_tokens: number } {
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

function writeCompletion(response: ServerResponse, body: ChatRequestBody, reply: { content?: string; toolCalls?: ScriptedToolCall[]; usage?: Usage }): void {
  const toolCalls = toolCallsOf(reply);
  json(response, 200, {
    id: `chatcmpl-${Date.now()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: body.model ?? 'scripted',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: reply.content ?? null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
        finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
      },
    ],
    usage: usageFor(body, reply),
  });
}

function writeStream(response: ServerResponse, body: ChatRequestBody, reply: { content?: string; toolCalls?: ScriptedToolCall[]; usage?: Usage }): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const base = { id: `chatcmpl-${Date.now()}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: body.model ?? 'scripted' };
  const send = (choices: unknown[], extra: Record<string, unknown> = {}) => response.write(`data: ${JSON.stringify({ ...base, choices, ...extra })}\n\n`);
  send([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
  const content = reply.content ?? '';
  for (let offset = 0; offset < content.length; offset += 8) {
    send([{ index: 0, delta: { content: content.slice(offset, offset + 8) }, finish_reason: null }]);
  }
  const toolCalls = toolCallsOf(reply);
  toolCalls.forEach((call, index) => {
    const half = Math.floor(call.function.arguments.length / 2);
    send([{ index: 0, delta: { tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: call.function.arguments.slice(0, half) } }] }, finish_reason: null }]);
    send([{ index: 0, delta: { tool_calls: [{ index, function: { arguments: call.function.arguments.slice(half) } }] }, finish_reason: null }]);
  });
  send([{ index: 0, delta: {}, finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop' }]);
  if (body.stream_options?.include_usage) send([], { usage: usageFor(body, reply) });
  response.end('data: [DONE]\n\n');
}

function embedding(text: string, dimensions: number): number[] {
  const values: number[] = [];
  let block = createHash('sha256').update(text).digest();
  while (values.length < dimensions) {
    for (const byte of block) if (values.length < dimensions) values.push(byte / 127.5 - 1);
    block = createHash('sha256').update(block).digest();
  }
  const norm = Math.hypot(...values) || 1;
  return values.map((value) => value / norm);
}

export async function startModelServer(options: ModelServerOptions): Promise<ScriptedModelServer> {
  const requests: RecordedRequest[] = [];
  const chatRequests: RecordedRequest[] = [];
  const stats = { inFlight: 0, maxInFlight: 0, aborted: 0 };
  const queue = Array.isArray(options.reply) ? [...options.reply] : null;
  const models = options.models ?? ['scripted-model'];

  const nextReply = (recorded: RecordedRequest, index: number): ScriptedReply => {
    if (queue) return queue.shift() ?? { status: 500, message: `The scripted server ran out of replies at chat request ${index + 1}.` };
    return (options.reply as Responder)(recorded, index);
  };

  async function chat(response: ServerResponse, recorded: RecordedRequest): Promise<void> {
    const body = recorded.body;
    if (options.rejectTools && body.tools && body.tools.length > 0) {
      json(response, 400, { error: { message: 'This model does not support tools.', type: 'invalid_request_error' } });
      return;
    }
    if (recorded.purpose === 'probe') {
      writeCompletion(response, body, { content: '' });
      return;
    }
    const index = chatRequests.push(recorded) - 1;
    const reply = nextReply(recorded, index);
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
      if (path === '/v1/models') return json(response, 200, { object: 'list', data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'scripted' })) });
      if (path === '/v1/embeddings' && request.method === 'POST') {
        const inputs = Array.isArray(body.input) ? body.input : [body.input ?? ''];
        const dimensions = options.embeddingDimensions ?? 384;
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
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    chatRequests,
    stats,
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

/** The step id a step request is about (from "Step <id>: …" in Archon's brief), or null. */
export function stepIdOf(request: RecordedRequest): string | null {
  return /^Step ([^:\n]+):/m.exec(requestText(request))?.[1] ?? null;
}

/** The tool messages a request carries back to the model, in order. */
export function toolMessagesOf(request: RecordedRequest): string[] {
  return (request.body.messages ?? []).filter((message) => message.role === 'tool').map((message) => String(message.content));
}

export interface PlanStepScript {
  id: string;
  description: string;
  dependencies?: string[];
  tool?: string;
  args?: Record<string, unknown>;
}

/** A submit_plan tool call with these steps. */
export function planReply(steps: PlanStepScript[], goal = 'goal'): ScriptedReply {
  return { toolCalls: [{ name: 'submit_plan', arguments: { goal, steps: steps.map((step) => ({ dependencies: [], ...step })) } }] };
}
