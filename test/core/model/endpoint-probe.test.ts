import { afterEach, describe, expect, it } from 'vitest';
import { probeEndpoint } from '../../../src/core/model/endpoint-probe';
import { startModelServer, type ScriptedModelServer } from '../../kit/scripted-model-server';

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
const signal = () => new AbortController().signal;

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
    expect(server.requests.find((request) => request.purpose === 'probe')?.body).toMatchObject({ stream: true, tools: [expect.objectContaining({ type: 'function' })] });
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
    expect(server.requests.filter((request) => request.purpose === 'probe').map((request) => request.body.stream)).toEqual([true, false]);
  });

  it('an older llama.cpp without --jinja: refuses streaming first, then tools: the text protocol', async () => {
    server = await startModelServer({ reply: [], refuse: 'llamacpp-old-no-jinja' });
    expect(await probeEndpoint({ baseUrl: server.url, signal: signal() })).toMatchObject({ toolCalling: false, streaming: true, reason: expect.stringContaining('--jinja') });
    expect(server.requests.filter((request) => request.purpose === 'probe').map((request) => request.body.stream)).toEqual([true, false]);
  });

  it('LM Studio with no model loaded: a configuration error that says to load one', async () => {
    server = await startModelServer({ reply: [], refuse: 'lmstudio-no-model' });
    await expect(probeEndpoint({ baseUrl: server.url, signal: signal() })).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringMatching(/no model loaded.*lms load/) });
  });

  it('a model that fails to load once is probed again before deciding', async () => {
    server = await startModelServer({ reply: [], loadFailures: 1 });
    expect(await probeEndpoint({ baseUrl: server.url, signal: signal() })).toMatchObject({ toolCalling: true, streaming: true });
    expect(server.requests.filter((request) => request.purpose === 'probe')).toHaveLength(2);
  });

  it('llama.cpp still loading its model (503) is probed again before deciding', async () => {
    server = await startModelServer({ reply: [], loading: 2 });
    expect(await probeEndpoint({ baseUrl: server.url, signal: signal() })).toMatchObject({ toolCalling: true, streaming: true, reason: null });
    expect(server.requests.filter((request) => request.purpose === 'probe')).toHaveLength(3);
  });

  it('gives up on a model that keeps failing to load, after a bounded number of tries', async () => {
    server = await startModelServer({ reply: [], loadFailures: 10 });
    await expect(probeEndpoint({ baseUrl: server.url, signal: signal() })).rejects.toMatchObject({ code: 'MODEL_CALL_FAILED', message: expect.stringContaining('Failed to load model') });
    expect(server.requests.filter((request) => request.purpose === 'probe')).toHaveLength(3);
  });

  it('stops probing again at once when aborted', async () => {
    server = await startModelServer({ reply: [], loadFailures: 10 });
    const controller = new AbortController();
    const pending = probeEndpoint({ baseUrl: server.url, signal: controller.signal });
    await expect.poll(() => server?.requests.filter((request) => request.purpose === 'probe').length).toBe(1);
    controller.abort(new Error('stop'));
    await expect(pending).rejects.toThrow();
    expect(server.requests.filter((request) => request.purpose === 'probe')).toHaveLength(1);
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
});
