import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelServer, type ScriptedModelServer } from './scripted-model-server';

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const client = (url: string) => new OpenAI({ baseURL: url, apiKey: 'test', maxRetries: 0 });
const calculatorTool = {
  type: 'function' as const,
  function: { name: 'calculator', parameters: { type: 'object', properties: { expression: { type: 'string' } } } },
};

describe('scripted model server through the real openai client', () => {
  it('answers a JSON completion and logs the request', async () => {
    server = await startModelServer({ reply: [{ content: 'hello there' }] });
    const completion = await client(server.url).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'Say hi' }] });
    expect(completion.choices[0]?.message.content).toBe('hello there');
    expect(completion.usage?.total_tokens).toBeGreaterThan(0);
    expect(server.chatRequests[0]?.body.messages?.[0]?.content).toBe('Say hi');
  });

  it('returns tool calls, several at once', async () => {
    server = await startModelServer({
      reply: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '50*0.2' } }, { name: 'calculator', arguments: { expression: '1+1' } }] }],
    });
    const completion = await client(server.url).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }], tools: [calculatorTool] });
    const calls = completion.choices[0]?.message.tool_calls ?? [];
    expect(calls.map((call) => (call.type === 'function' ? JSON.parse(call.function.arguments) : null))).toEqual([{ expression: '50*0.2' }, { expression: '1+1' }]);
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('streams content and tool-call arguments as SSE deltas, with usage', async () => {
    server = await startModelServer({ reply: [{ content: 'streamed answer text', toolCalls: [{ name: 'calculator', arguments: { expression: '2^8' } }] }] });
    const stream = await client(server.url).chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      tools: [calculatorTool],
      stream: true,
      stream_options: { include_usage: true },
    });
    let content = '';
    let args = '';
    let usage = 0;
    let deltas = 0;
    for await (const chunk of stream) {
      deltas++;
      content += chunk.choices[0]?.delta.content ?? '';
      args += chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? '';
      usage = chunk.usage?.total_tokens ?? usage;
    }
    expect(content).toBe('streamed answer text');
    expect(JSON.parse(args)).toEqual({ expression: '2^8' });
    expect(usage).toBeGreaterThan(0);
    expect(deltas).toBeGreaterThan(4);
  });

  it('sends malformed tool arguments untouched', async () => {
    server = await startModelServer({ reply: [{ toolCalls: [{ name: 'calculator', arguments: '{"expression": "2+' }] }] });
    const completion = await client(server.url).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }], tools: [calculatorTool] });
    const call = completion.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === 'function' && call.function.arguments).toBe('{"expression": "2+');
  });

  it('answers 429 and 500 as API errors the client can classify', async () => {
    server = await startModelServer({ reply: [{ status: 429, message: 'slow down' }, { status: 500 }] });
    const api = client(server.url);
    await expect(api.chat.completions.create({ model: 'm', messages: [] })).rejects.toMatchObject({ status: 429 });
    await expect(api.chat.completions.create({ model: 'm', messages: [] })).rejects.toMatchObject({ status: 500 });
  });

  it('rejects tools when scripted as a text-only server', async () => {
    server = await startModelServer({ reply: [{ content: 'Final Answer: 10' }], rejectTools: true });
    const api = client(server.url);
    await expect(api.chat.completions.create({ model: 'm', messages: [], tools: [calculatorTool] })).rejects.toMatchObject({ status: 400 });
    const plain = await api.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    expect(plain.choices[0]?.message.content).toBe('Final Answer: 10');
  });

  it('hangs until the client aborts, and counts the abort', async () => {
    server = await startModelServer({ reply: [{ hang: true }] });
    const controller = new AbortController();
    const pending = client(server.url).chat.completions.create({ model: 'm', messages: [] }, { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.stats.inFlight).toBe(1);
    controller.abort();
    await expect(pending).rejects.toThrow(/abort/i);
    await expect.poll(() => server?.stats.aborted).toBe(1);
  });

  it('adds latency and tracks requests in flight', async () => {
    server = await startModelServer({ reply: () => ({ content: 'ok' }), latencyMs: 150 });
    const api = client(server.url);
    const started = Date.now();
    await Promise.all(Array.from({ length: 4 }, () => api.chat.completions.create({ model: 'm', messages: [] })));
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(server.stats.maxInFlight).toBe(4);
  });

  it('lists models and returns deterministic unit-length embeddings', async () => {
    server = await startModelServer({ reply: [], models: ['llama3', 'qwen'] });
    const api = client(server.url);
    const models = await api.models.list();
    expect(models.data.map((model) => model.id)).toEqual(['llama3', 'qwen']);
    const first = await api.embeddings.create({ model: 'e', input: ['alpha', 'beta'] });
    const again = await api.embeddings.create({ model: 'e', input: 'alpha' });
    expect(first.data).toHaveLength(2);
    expect(first.data[0]?.embedding).toHaveLength(384);
    expect(again.data[0]?.embedding).toEqual(first.data[0]?.embedding);
    expect(Math.hypot(...(first.data[0]?.embedding ?? []))).toBeCloseTo(1, 5);
  });

  it('fails loudly when the script runs out of replies', async () => {
    server = await startModelServer({ reply: [] });
    await expect(client(server.url).chat.completions.create({ model: 'm', messages: [] })).rejects.toThrow(/ran out of replies/);
  });
});
