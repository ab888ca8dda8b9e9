import { afterEach, describe, expect, it } from 'vitest';
import { probeEndpoint } from '../../../src/core/model/endpoint-probe';
import type { ServerRequest } from '../../../src/core/model/server-request';
import { startModelServer, type ScriptedModelServer } from '../../kit/scripted-model-server';

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
const signal = () => new AbortController().signal;
/** The probe's requests with tools (it asks for the models and the context besides). */
const probeChats = () => (server?.requests ?? []).filter((request) => request.purpose === 'probe' && request.path === '/v1/chat/completions');

describe('probeEndpoint', () => {
  it('reports models, native tool calling, and llama.cpp context length and slots', async () => {
    server = await startModelServer({ reply: [], models: ['qwen2.5', 'llama3.1'], llamaCpp: { contextLength: 8192, slots: 6 } });
    expect(await probeEndpoint({ baseUrl: server.url, signal: signal() })).toEqual({
      baseUrl: server.url,
      models: ['qwen2.5', 'llama3.1'],
      model: 'qwen2.5',
      toolCalling: true,
      streaming: true,
      reason: null,
      contextLength: 8192,
      contextSource: 'llama.cpp /props n_ctx',
      parallelSlots: 6,
    });
    expect(server.chatRequests).toHaveLength(0);
    expect(probeChats()[0]?.body).toMatchObject({ stream: true, tools: [expect.objectContaining({ type: 'function' })] });
    // A server that names itself llama.cpp is not asked what other kinds of servers answer.
    expect(server.requests.map((request) => request.path).filter((path) => path.startsWith('/api/'))).toEqual([]);
  });

  it('detects a server without tool calling', async () => {
    server = await startModelServer({ reply: [], rejectTools: true });
    expect(await probeEndpoint({ baseUrl: server.url, signal: signal() })).toMatchObject({ toolCalling: false, reason: expect.stringMatching(/HTTP 400: Unrecognized request argument supplied: tools/) });
  });

  // The refusals as each server words them (test/kit/scripted-model-server.ts, REFUSALS; sources in docs/model-protocol.md).
  it.each([
    ['ollama-no-tools', /"registry\.ollama\.ai\/library\/scripted-model does not support tools"/],
    ['vllm-no-auto-tool-choice', /vLLM .*--enable-auto-tool-choice --tool-call-parser/],
    ['llamacpp-no-jinja', /llama\.cpp .*--jinja/],
  ] as const)('%s: text protocol, with the reason', async (refuse, reason) => {
    server = await startModelServer({ reply: [], refuse });
    expect(await probeEndpoint({ baseUrl: server.url, signal: signal() })).toMatchObject({ toolCalling: false, streaming: true, reason: expect.stringMatching(reason) });
  });

  it('llama.cpp that cannot stream with tools: native calls, sent whole', async () => {
    server = await startModelServer({ reply: [], refuse: 'llamacpp-no-tools-stream' });
    expect(await probeEndpoint({ baseUrl: server.url, signal: signal() })).toMatchObject({ toolCalling: true, streaming: false, reason: expect.stringContaining('Cannot use tools with stream') });
    expect(probeChats().map((request) => request.body.stream)).toEqual([true, false]);
  });

  it('an older llama.cpp without --jinja: refuses streaming first, then tools: the text protocol', async () => {
    server = await startModelServer({ reply: [], refuse: 'llamacpp-old-no-jinja' });
    expect(await probeEndpoint({ baseUrl: server.url, signal: signal() })).toMatchObject({ toolCalling: false, streaming: true, reason: expect.stringContaining('--jinja') });
    expect(probeChats().map((request) => request.body.stream)).toEqual([true, false]);
  });

  it('LM Studio with no model loaded: a configuration error that says to load one', async () => {
    server = await startModelServer({ reply: [], refuse: 'lmstudio-no-model' });
    await expect(probeEndpoint({ baseUrl: server.url, signal: signal() })).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringMatching(/no model loaded.*lms load/) });
  });

  it('a model that fails to load once is probed again before deciding', async () => {
    server = await startModelServer({ reply: [], loadFailures: 1 });
    expect(await probeEndpoint({ baseUrl: server.url, signal: signal() })).toMatchObject({ toolCalling: true, streaming: true });
    expect(probeChats()).toHaveLength(2);
  });

  it('llama.cpp still loading its model (503) is probed again before deciding', async () => {
    server = await startModelServer({ reply: [], loading: 2 });
    expect(await probeEndpoint({ baseUrl: server.url, signal: signal() })).toMatchObject({ toolCalling: true, streaming: true, reason: null });
    expect(probeChats()).toHaveLength(3);
  });

  it('gives up on a model that keeps failing to load, after a bounded number of tries', async () => {
    server = await startModelServer({ reply: [], loadFailures: 10 });
    await expect(probeEndpoint({ baseUrl: server.url, signal: signal() })).rejects.toMatchObject({ code: 'MODEL_CALL_FAILED', message: expect.stringContaining('Failed to load model') });
    expect(probeChats()).toHaveLength(3);
  });

  it('stops probing again at once when aborted', async () => {
    server = await startModelServer({ reply: [], loadFailures: 10 });
    const controller = new AbortController();
    const pending = probeEndpoint({ baseUrl: server.url, signal: controller.signal });
    await expect.poll(() => probeChats().length).toBe(1);
    controller.abort(new Error('stop'));
    await expect(pending).rejects.toThrow();
    expect(probeChats()).toHaveLength(1);
  });

  it.each([
    [{ server: 'ollama', modelMax: 131072, numCtx: 8192 } as const, null, 8192, 'Ollama /api/show num_ctx'],
    [{ server: 'ollama', modelMax: 131072 } as const, null, 4096, 'Ollama default'],
    [{ server: 'ollama', modelMax: 131072 } as const, 32768, 32768, 'the contextLength setting'],
    [{ server: 'ollama', modelMax: 2048 } as const, null, 2048, 'Ollama default'],
    [{ server: 'lmstudio', loaded: 16384 } as const, null, 16384, 'LM Studio /api/v0/models loaded_context_length'],
    [{ server: 'vllm', maxModelLen: 32768 } as const, 4096, 32768, 'vLLM /v1/models max_model_len'],
    [undefined, 6000, 6000, 'the contextLength setting'],
    [undefined, null, null, null],
  ])('context length from %o (setting %s): %s', async (reportsContext, setting, contextLength, source) => {
    server = await startModelServer({ reply: [], reportsContext });
    const probe = await probeEndpoint({ baseUrl: server.url, contextLength: setting, signal: signal() });
    expect(probe.contextLength).toBe(contextLength);
    if (source === null) expect(probe.contextSource).toBeNull();
    else expect(probe.contextSource).toContain(source);
  });

  it('accepts an Ollama-style tagged name and refuses a model the server does not have', async () => {
    server = await startModelServer({ reply: [], models: ['llama3.1:latest'] });
    expect((await probeEndpoint({ baseUrl: server.url, model: 'llama3.1', signal: signal() })).model).toBe('llama3.1');
    await expect(probeEndpoint({ baseUrl: server.url, model: 'gpt-9', signal: signal() })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringContaining('Available: llama3.1:latest'),
    });
  });

  it('names the URL and says what to do when nothing listens there', async () => {
    const closed = await startModelServer({ reply: [] });
    const url = closed.url;
    await closed.close();
    await expect(probeEndpoint({ baseUrl: url, signal: signal() })).rejects.toMatchObject({
      code: 'MODEL_UNREACHABLE',
      message: expect.stringMatching(new RegExp(`${url.replace(/[.]/g, '\\.')}.*ollama serve.*--model-url`)),
    });
  });

  describe('tells of every request the server received, one each, with X-Archon-Purpose: probe', () => {
    const probeRecording = async (options: Parameters<typeof probeEndpoint>[0]) => {
      const told: ServerRequest[] = [];
      const outcome = await probeEndpoint({ ...options, onRequest: (request) => void told.push(request) }).catch((error: unknown) => error);
      return { told, outcome };
    };

    it('the models, the request with tools (with its tokens) and the context length endpoints', async () => {
      server = await startModelServer({ reply: [], llamaCpp: { contextLength: 8192, slots: 2 } });
      const { told } = await probeRecording({ baseUrl: server.url, signal: signal() });
      expect(server.requests.map((request) => request.purpose)).toEqual(server.requests.map(() => 'probe'));
      const pathOf = (told: ServerRequest) => /^[A-Z]+ ([^:]+):/.exec(told.request)?.[1];
      expect(told.map(pathOf).sort()).toEqual(server.requests.map((request) => request.path).sort());
      expect(told.every((request) => request.purpose === 'probe' && request.ok)).toBe(true);
      const chat = told.find((request) => request.request.startsWith('POST /v1/chat/completions'));
      expect(chat?.usage).toMatchObject({ estimated: false });
      expect((chat?.usage.promptTokens ?? 0) + (chat?.usage.completionTokens ?? 0)).toBeGreaterThan(0);
    });

    it('a request the server refused is told as failed, the one after it as answered', async () => {
      server = await startModelServer({ reply: [], loadFailures: 1 });
      const { told } = await probeRecording({ baseUrl: server.url, signal: signal() });
      expect(told).toHaveLength(server.requests.length);
      const chats = told.filter((request) => request.request.startsWith('POST /v1/chat/completions'));
      expect(chats.map((request) => request.ok)).toEqual([false, true]);
      expect(chats[0]?.error).toContain('Failed to load model');
    });

    it('a probe that fails after the server answered still tells of what it sent', async () => {
      server = await startModelServer({ reply: [], models: ['llama3.1'] });
      const { told, outcome } = await probeRecording({ baseUrl: server.url, model: 'gpt-9', signal: signal() });
      expect(outcome).toMatchObject({ code: 'CONFIG_INVALID' });
      expect(told.map((request) => request.request)).toEqual(['GET /v1/models: HTTP 200']);
      expect(server.requests).toHaveLength(1);
    });

    it('nothing listening: no request reached a server, none is told', async () => {
      const closed = await startModelServer({ reply: [] });
      await closed.close();
      const { told, outcome } = await probeRecording({ baseUrl: closed.url, signal: signal() });
      expect(outcome).toMatchObject({ code: 'MODEL_UNREACHABLE' });
      expect(told).toEqual([]);
    });
  });
});
