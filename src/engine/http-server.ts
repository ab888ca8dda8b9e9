import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { z } from 'zod';
import { planGeneration } from './answer-plan';
import { ChatRequestSchema, type ChatRequest } from './chat-request';
import { generate, type Generated, type GenerationListener } from './generation';
import type { GenerationStats } from './generation-stats';
import type { Grammars } from './grammars';
import * as wire from './openai-wire';
import { RequestError } from './request-error';
import type { SequenceSlots } from './sequence-slots';

/** Archon's requests are at most a context of text; a body past this is not one of them. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

export interface EngineServerOptions {
  /** The bearer token every request must carry (loopback ports are open to every local user). */
  token: string;
  modelId: string;
  /** Tokens per sequence. */
  contextLength: number;
  slots: SequenceSlots;
  grammars: Grammars;
  stats: GenerationStats;
}

export interface EngineServer {
  port: number;
  /** Stops listening, ends every connection (aborting its generation) and resolves once each generation has settled and been counted. */
  close(): Promise<void>;
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

const errorBody = (error: RequestError) => ({ error: { message: error.message, type: error.type } });

function authorized(request: IncomingMessage, token: string): boolean {
  const given = Buffer.from(/^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1] ?? '');
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new RequestError(413, 'invalid_request_error', `the request body is over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new RequestError(400, 'invalid_request_error', 'the request body is not JSON');
  }
}

function parseChatRequest(body: unknown): ChatRequest {
  const parsed = ChatRequestSchema.safeParse(body);
  if (parsed.success) return parsed.data;
  throw new RequestError(400, 'invalid_request_error', z.prettifyError(parsed.error));
}

/**
 * Server-sent events: each chunk a `data:` line, then `[DONE]`. Nothing is sent before the first
 * token, as llama.cpp's server does: the wait for a sequence and the prompt's evaluation fall under
 * the client's first-byte timeout, not its shorter timeout between chunks.
 */
function eventStream(response: ServerResponse, completion: wire.Completion) {
  let started = false;
  const send = (data: unknown) => {
    if (!started) {
      started = true;
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      response.write(`data: ${JSON.stringify(wire.roleChunk(completion))}\n\n`);
    }
    response.write(`data: ${JSON.stringify(data)}\n\n`);
  };
  return { send, end: () => response.end('data: [DONE]\n\n') };
}

const silent: GenerationListener = { onText: () => undefined, onCallStart: () => undefined, onCallArguments: () => undefined, onProgress: () => undefined };

/** At most one empty chunk a second while a call is written whole: the client's wait between chunks sees the generation alive. */
const PROGRESS_EVERY_MS = 1000;

function streamingListener(completion: wire.Completion, send: (data: unknown) => void): GenerationListener {
  let lastProgress = 0;
  return {
    onText: (text) => text && send(wire.textChunk(completion, text)),
    onCallStart: (index, call) => send(wire.callStartChunk(completion, index, call)),
    onCallArguments: (index, fragment) => send(wire.callArgumentsChunk(completion, index, fragment)),
    onProgress: () => {
      const now = performance.now();
      if (now - lastProgress < PROGRESS_EVERY_MS) return;
      lastProgress = now;
      send(wire.progressChunk(completion));
    },
  };
}

function outcomeOf(generated: Generated): 'completed' | 'aborted' {
  return generated.aborted ? 'aborted' : 'completed';
}

async function chatCompletion(options: EngineServerOptions, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const client = new AbortController();
  // The client's connection is the generation's life: Archon's emergency stop and cancellations close it.
  response.on('close', () => {
    if (!response.writableFinished) client.abort(new Error('the client closed the connection'));
  });
  const body = parseChatRequest(await readJson(request));
  const generation = await planGeneration(body, options.grammars, options.contextLength);
  const chat = await options.slots.acquire(client.signal);
  const completion = wire.newCompletion(options.modelId);
  const tokens = (generated: Generated) => ({ promptTokens: generated.promptTokens, completionTokens: generated.completionTokens, maxTokens: generation.maxTokens });
  const ended = options.stats.started(generation.maxTokens);
  try {
    if (!body.stream) {
      const generated = await generate(chat, generation, silent, client.signal);
      ended(outcomeOf(generated), tokens(generated));
      if (!generated.aborted) sendJson(response, 200, wire.wholeCompletion(completion, generated));
      return;
    }
    const events = eventStream(response, completion);
    const generated = await generate(chat, generation, streamingListener(completion, events.send), client.signal);
    ended(outcomeOf(generated), tokens(generated));
    if (generated.aborted) return;
    events.send(wire.finishChunk(completion, generated));
    if (body.stream_options?.include_usage) events.send(wire.usageChunk(completion, generated));
    events.end();
  } catch (error) {
    ended('failed', { promptTokens: 0, completionTokens: 0, maxTokens: generation.maxTokens });
    throw error;
  } finally {
    options.slots.release(chat);
  }
}

function models(options: EngineServerOptions) {
  // max_model_len is vLLM's field for the context, which Archon's probe reads from this list.
  return { object: 'list', data: [{ id: options.modelId, object: 'model', created: 0, owned_by: 'archon', max_model_len: options.contextLength }] };
}

async function route(options: EngineServerOptions, request: IncomingMessage, response: ServerResponse): Promise<void> {
  if (!authorized(request, options.token)) throw new RequestError(401, 'authentication_error', 'a bearer token is required (Authorization: Bearer TOKEN), the one Archon started the engine with');
  const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
  if (request.method === 'GET' && path === '/v1/models') return sendJson(response, 200, models(options));
  if (request.method === 'POST' && path === '/v1/chat/completions') return chatCompletion(options, request, response);
  if (request.method === 'GET' && path === '/archon/stats') return sendJson(response, 200, options.stats.snapshot());
  throw new RequestError(404, 'not_found_error', `${request.method ?? ''} ${path} is not served here: the engine serves GET /v1/models and POST /v1/chat/completions`);
}

function answerError(response: ServerResponse, error: unknown): void {
  const known = error instanceof RequestError ? error : new RequestError(500, 'server_error', `the engine failed: ${error instanceof Error ? error.message : String(error)}`);
  if (response.destroyed) return;
  if (!response.headersSent) return sendJson(response, known.status, errorBody(known));
  // Mid-stream: the error as the last event, as OpenAI-compatible servers send it.
  response.end(`data: ${JSON.stringify(errorBody(known))}\n\n`);
}

/** The engine's OpenAI-compatible endpoint on 127.0.0.1 (port 0: the system picks one). */
export function startEngineServer(options: EngineServerOptions): Promise<EngineServer> {
  const inFlight = new Set<Promise<void>>();
  const server = createServer((request, response) => {
    const handled = route(options, request, response).catch((error: unknown) => answerError(response, error));
    inFlight.add(handled);
    void handled.finally(() => inFlight.delete(handled));
  });
  const close = async () => {
    const closed = new Promise<void>((done) => server.close(() => done()));
    server.closeAllConnections();
    await Promise.all([...inFlight]);
    await closed;
  };
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') return reject(new Error('the engine has no TCP address'));
      resolve({ port: address.port, close });
    });
  });
}
