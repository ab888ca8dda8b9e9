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
      contextLength: 8192,
      parallelSlots: 6,
    });
    expect(server.chatRequests).toHaveLength(0);
  });

  it('detects a server without tool calling', async () => {
    server = await startModelServer({ reply: [], rejectTools: true });
    expect((await probeEndpoint({ baseUrl: server.url, signal: signal() })).toolCalling).toBe(false);
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
