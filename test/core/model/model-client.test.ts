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
