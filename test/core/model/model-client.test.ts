import { afterEach, describe, expect, it } from 'vitest';
import { ArchonError } from '../../../src/shared/errors';
import type { AttemptRecord } from '../../../src/core/model/chat';
import { createOpenAIModelClient } from '../../../src/core/model/model-client';
import { startModelServer, type ScriptedModelServer } from '../../kit/scripted-model-server';

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const fastRetry = { windowMs: 400, baseDelayMs: 20, maxDelayMs: 100, firstByteTimeoutMs: 10_000, idleTimeoutMs: 10_000 };
const request = { purpose: 'step' as const, messages: [{ role: 'user' as const, content: 'hello' }] };

describe('OpenAI model client', () => {
  it('streams a completion with tool calls and server usage', async () => {
    server = await startModelServer({ reply: [{ content: 'thinking', toolCalls: [{ name: 'calculator', arguments: { expression: '1+1' } }], usage: { prompt_tokens: 11, completion_tokens: 7 } }] });
    const client = createOpenAIModelClient({ baseUrl: server.url, model: 'm', retry: fastRetry });
    const response = await client.chat({ ...request, tools: [{ name: 'calculator', description: 'd', parameters: { type: 'object' } }] }, { signal: new AbortController().signal });
    expect(response).toMatchObject({ content: 'thinking', toolCalls: [{ name: 'calculator', arguments: '{"expression":"1+1"}' }], usage: { promptTokens: 11, completionTokens: 7, estimated: false }, attempts: 1 });
    expect(server.chatRequests[0]?.body.stream).toBe(true);
    expect(server.chatRequests[0]?.purpose).toBe('step');
  });

  it('retries 429 and 500 with backoff; an attempt that generated nothing is not charged', async () => {
    server = await startModelServer({ reply: [{ status: 429 }, { status: 500 }, { content: 'finally' }] });
    const attempts: AttemptRecord[] = [];
    const client = createOpenAIModelClient({ baseUrl: server.url, model: 'm', retry: fastRetry });
    const response = await client.chat(request, { signal: new AbortController().signal, onAttempt: (attempt) => attempts.push(attempt) });
    expect(response.content).toBe('finally');
    expect(response.attempts).toBe(3);
    expect(attempts.map((attempt) => attempt.ok)).toEqual([false, false, true]);
    expect(attempts.slice(0, 2).map((attempt) => attempt.usage.promptTokens + attempt.usage.completionTokens)).toEqual([0, 0]);
    expect(attempts[2]?.usage.promptTokens).toBeGreaterThan(0);
    const [first, second, third] = server.chatRequests.map((recorded) => recorded.at);
    expect((second as number) - (first as number)).toBeGreaterThanOrEqual(10);
    expect((third as number) - (second as number)).toBeGreaterThanOrEqual(20);
  });

  it('keeps retrying for its window, then says the server is unavailable and what to do', async () => {
    server = await startModelServer({ reply: () => ({ status: 500, message: 'model crashed' }) });
    const client = createOpenAIModelClient({ baseUrl: server.url, model: 'm', retry: fastRetry });
    const failure = await client.chat(request, { signal: new AbortController().signal }).catch((error: unknown) => error);
    expect(ArchonError.isInstance(failure) && failure.code).toBe('MODEL_UNAVAILABLE');
    expect((failure as Error).message).toMatch(/did not answer .*last: HTTP 500 .*model crashed.*paused.*resume/s);
    expect(server.chatRequests.length).toBeGreaterThan(2);
  });

  it('ends an attempt that gets no first byte, and retries it', async () => {
    server = await startModelServer({ reply: [{ hang: true }, { content: 'woke up' }] });
    const client = createOpenAIModelClient({ baseUrl: server.url, model: 'm', retry: { ...fastRetry, firstByteTimeoutMs: 150 } });
    const attempts: AttemptRecord[] = [];
    const response = await client.chat(request, { signal: new AbortController().signal, onAttempt: (attempt) => attempts.push(attempt) });
    expect(response.content).toBe('woke up');
    expect(attempts[0]).toMatchObject({ ok: false, error: expect.stringMatching(/first-byte timeout/) });
    await expect.poll(() => server?.stats.aborted).toBe(1);
  });

  it('pauses when a server that never answers outlasts the window', async () => {
    server = await startModelServer({ reply: () => ({ hang: true }) });
    const client = createOpenAIModelClient({ baseUrl: server.url, model: 'm', retry: { ...fastRetry, windowMs: 0, firstByteTimeoutMs: 100 } });
    await expect(client.chat(request, { signal: new AbortController().signal })).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE', message: expect.stringMatching(/first-byte timeout/) });
  });

  it('honours Retry-After beyond its own backoff', async () => {
    server = await startModelServer({ reply: [{ status: 429, retryAfterSeconds: 1 }, { content: 'after the wait' }] });
    const client = createOpenAIModelClient({ baseUrl: server.url, model: 'm', retry: { ...fastRetry, windowMs: 5000 } });
    expect((await client.chat(request, { signal: new AbortController().signal })).content).toBe('after the wait');
    const [first, second] = server.chatRequests.map((recorded) => recorded.at);
    expect((second as number) - (first as number)).toBeGreaterThanOrEqual(1000);
  });

  it('does not retry a request the server refuses as malformed', async () => {
    server = await startModelServer({ reply: [{ status: 400, message: 'bad request' }] });
    const client = createOpenAIModelClient({ baseUrl: server.url, model: 'm', retry: fastRetry });
    await expect(client.chat(request, { signal: new AbortController().signal })).rejects.toThrow(/HTTP 400/);
    expect(server.chatRequests).toHaveLength(1);
  });

  it('aborts a request that never answers, at once', async () => {
    server = await startModelServer({ reply: [{ hang: true }] });
    const client = createOpenAIModelClient({ baseUrl: server.url, model: 'm', retry: fastRetry });
    const controller = new AbortController();
    const pending = client.chat(request, { signal: controller.signal });
    await expect.poll(() => server?.stats.inFlight).toBe(1);
    controller.abort(new ArchonError('CANCELLED', 'emergency stop'));
    await expect(pending).rejects.toMatchObject({ code: 'CANCELLED', message: 'emergency stop' });
    await expect.poll(() => server?.stats.aborted).toBe(1);
  });
});

describe('OpenAI model client: what a grammar-constrained server refuses', () => {
  const signal = () => new AbortController().signal;
  const calculator = { name: 'calculator', description: 'Evaluates arithmetic.', parameters: { type: 'object', properties: { expression: { type: 'string', maxLength: 5000, pattern: '^[0-9+*/() -]+$' } } } };

  it('sends every schema with its repetitions under the grammar limit and no pattern', async () => {
    server = await startModelServer({ reply: [{ content: 'ok' }, { content: '{}' }] });
    const client = createOpenAIModelClient({ baseUrl: server.url, model: 'm', retry: fastRetry });
    await client.chat({ ...request, tools: [calculator], toolChoice: 'required' }, { signal: signal() });
    await client.chat({ ...request, responseSchema: { name: 'answer', schema: calculator.parameters } }, { signal: signal() });
    const [withTools, withFormat] = server.chatRequests.map((recorded) => recorded.body);
    expect(withTools?.tools?.[0]?.function.parameters).toEqual({ type: 'object', properties: { expression: { type: 'string', maxLength: 1999 } } });
    expect(withTools?.tool_choice).toBe('required');
    expect(withFormat?.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object', properties: { expression: { type: 'string', maxLength: 1999 } } } } });
  });

  it('sends a request again in the text protocol when the server cannot build a grammar from its tools, reads the call, and sends later ones so at once', async () => {
    server = await startModelServer({ reply: [{ status: 400, message: 'failed to parse grammar' }, { content: 'Thought: add\nAction: {"tool": "calculator", "arguments": {"expression": "6*7"}}' }, { content: 'Final Answer: 42' }] });
    const attempts: AttemptRecord[] = [];
    const client = createOpenAIModelClient({ baseUrl: server.url, model: 'm', retry: fastRetry });
    const system = { role: 'system' as const, content: 'You are a step.' };
    const call = await client.chat({ purpose: 'step', messages: [system, request.messages[0]!], tools: [calculator] }, { signal: signal(), onAttempt: (attempt) => attempts.push(attempt) });
    expect(call.toolCalls).toEqual([{ id: 'call_0', name: 'calculator', arguments: '{"expression":"6*7"}' }]);
    const answer = await client.chat({ ...request, tools: [calculator] }, { signal: signal() });
    expect(answer).toMatchObject({ content: '42', toolCalls: [] });
    const [refused, again, later] = server.chatRequests.map((recorded) => recorded.body);
    expect(server.chatRequests).toHaveLength(3);
    expect(refused?.tools).toHaveLength(1);
    expect(again?.tools).toBeUndefined();
    expect(again?.messages?.[0]).toMatchObject({ role: 'system', content: expect.stringMatching(/^You are a step\.\n\nYou can use these tools:\n- calculator/) });
    expect(later?.tools).toBeUndefined();
    expect(later?.messages?.[0]).toMatchObject({ role: 'system', content: expect.stringMatching(/^You can use these tools/) });
    expect(attempts.map((attempt) => attempt.ok)).toEqual([false, true]);
  });

  it('leaves out a tool_choice or response_format the server refused, from then on', async () => {
    server = await startModelServer({
      reply: [{ status: 400, message: "tool_choice param 'required' is not supported" }, { content: 'a' }, { content: 'b' }, { status: 400, message: 'response_format json_schema is not supported' }, { content: '{}' }, { content: '{}' }],
    });
    const client = createOpenAIModelClient({ baseUrl: server.url, model: 'm', retry: fastRetry });
    await client.chat({ ...request, tools: [calculator], toolChoice: 'required' }, { signal: signal() });
    await client.chat({ ...request, tools: [calculator], toolChoice: 'required' }, { signal: signal() });
    await client.chat({ ...request, responseSchema: { name: 'answer', schema: calculator.parameters } }, { signal: signal() });
    await client.chat({ ...request, responseSchema: { name: 'answer', schema: calculator.parameters } }, { signal: signal() });
    const bodies = server.chatRequests.map((recorded) => recorded.body);
    expect(bodies.map((body) => body.tool_choice ?? null)).toEqual(['required', null, null, null, null, null]);
    expect(bodies.map((body) => (body.response_format ? 'format' : null))).toEqual([null, null, null, 'format', null, null]);
  });

  it('does not hide a 400 about something else', async () => {
    server = await startModelServer({ reply: [{ status: 400, message: 'messages must not be empty' }] });
    const client = createOpenAIModelClient({ baseUrl: server.url, model: 'm', retry: fastRetry });
    const failure = await client.chat({ ...request, tools: [calculator], toolChoice: 'required' }, { signal: signal() }).catch((error: unknown) => error);
    expect(ArchonError.isInstance(failure) && failure.code).toBe('MODEL_CALL_FAILED');
    expect(server.chatRequests).toHaveLength(1);
  });
});

describe('OpenAI model client: what a template-rendering server needs', () => {
  it('sends back a call whose arguments were cut off as JSON a template can render', async () => {
    server = await startModelServer({ reply: [{ content: 'ok' }] });
    const client = createOpenAIModelClient({ baseUrl: server.url, model: 'm', retry: fastRetry });
    const toolCalls = [
      { id: 'a', name: 'calculator', arguments: '{"expression": "6*' },
      { id: 'b', name: 'calculator', arguments: '<tool_call>fal' },
      { id: 'c', name: 'calculator', arguments: '{"expression":"1+1"}' },
    ];
    await client.chat({ ...request, messages: [...request.messages, { role: 'assistant', content: null, toolCalls }] }, { signal: new AbortController().signal });
    const sent = server.chatRequests[0]?.body.messages?.[1]?.tool_calls as { function: { arguments: string } }[];
    expect(sent.map((call) => call.function.arguments)).toEqual(['{}', '{}', '{"expression":"1+1"}']);
  });

  it("learns the server's real token count when it refuses a prompt over its context, and sends the request fitted again", async () => {
    server = await startModelServer({
      reply: [{ status: 400, message: 'request (6100 tokens) exceeds the available context size (4096 tokens), try increasing it' }, { content: 'ok', usage: { prompt_tokens: 2900, completion_tokens: 1 } }, { content: 'ok' }],
    });
    const client = createOpenAIModelClient({ baseUrl: server.url, model: 'm', retry: fastRetry, context: { contextLength: 4096, source: 'test' } });
    const observation = { role: 'tool' as const, toolCallId: 'a', content: 'x'.repeat(6000) };
    const messages = [...request.messages, { role: 'assistant' as const, content: null, toolCalls: [{ id: 'a', name: 'read_file', arguments: '{}' }] }, observation];
    expect((await client.chat({ ...request, messages }, { signal: new AbortController().signal })).content).toBe('ok');
    const [refused, fitted] = server.chatRequests.map((recorded) => String(recorded.body.messages?.[2]?.content));
    expect(refused).toHaveLength(6000);
    expect(fitted).toMatch(/\[truncated by Archon: .* to fit the model's context of 4096 tokens\]$/);
    // The scale learnt stays: the same prompt is cut before it is sent the next time.
    await client.chat({ ...request, messages }, { signal: new AbortController().signal });
    expect(String(server.chatRequests[2]?.body.messages?.[2]?.content)).toContain('[truncated by Archon');
  });

  it("does not retry a 500 that is the server failing on the request's content", async () => {
    server = await startModelServer({ reply: () => ({ status: 500, message: 'Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse error' }) });
    const client = createOpenAIModelClient({ baseUrl: server.url, model: 'm', retry: fastRetry });
    const failure = await client.chat(request, { signal: new AbortController().signal }).catch((error: unknown) => error);
    expect(ArchonError.isInstance(failure) && failure.code).toBe('MODEL_CALL_FAILED');
    expect(server.chatRequests).toHaveLength(1);
  });
});
