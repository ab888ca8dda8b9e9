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

const fastRetry = { retries: 3, baseDelayMs: 20, maxDelayMs: 100 };
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

  it('retries 429 and 500 with backoff, and every attempt counts toward usage', async () => {
    server = await startModelServer({ reply: [{ status: 429 }, { status: 500 }, { content: 'finally' }] });
    const attempts: AttemptRecord[] = [];
    const client = createOpenAIModelClient({ baseUrl: server.url, model: 'm', retry: fastRetry });
    const response = await client.chat(request, { signal: new AbortController().signal, onAttempt: (attempt) => attempts.push(attempt) });
    expect(response.content).toBe('finally');
    expect(response.attempts).toBe(3);
    expect(attempts.map((attempt) => attempt.ok)).toEqual([false, false, true]);
    expect(attempts.every((attempt) => attempt.usage.promptTokens > 0)).toBe(true);
    const [first, second, third] = server.chatRequests.map((recorded) => recorded.at);
    expect((second as number) - (first as number)).toBeGreaterThanOrEqual(10);
    expect((third as number) - (second as number)).toBeGreaterThanOrEqual(20);
  });

  it('gives up after its retries with a clear reason', async () => {
    server = await startModelServer({ reply: () => ({ status: 500, message: 'model crashed' }) });
    const client = createOpenAIModelClient({ baseUrl: server.url, model: 'm', retry: fastRetry });
    const failure = await client.chat(request, { signal: new AbortController().signal }).catch((error: unknown) => error);
    expect(ArchonError.isInstance(failure) && failure.code).toBe('MODEL_CALL_FAILED');
    expect((failure as Error).message).toMatch(/after 4 attempts: HTTP 500 .*model crashed/);
    expect(server.chatRequests).toHaveLength(4);
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
    const started = Date.now();
    controller.abort(new ArchonError('CANCELLED', 'emergency stop'));
    await expect(pending).rejects.toMatchObject({ code: 'CANCELLED', message: 'emergency stop' });
    expect(Date.now() - started).toBeLessThan(200);
    await expect.poll(() => server?.stats.aborted).toBe(1);
  });
});
