import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createOpenAIModelClient } from '../../../src/core/model/model-client';
import { assembleStream } from '../../../src/core/model/stream-assembler';
import { startModelServer, type ScriptedModelServer, type ScriptedToolCall, type StreamQuirk } from '../../kit/scripted-model-server';

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const request = { purpose: 'step' as const, messages: [{ role: 'user' as const, content: 'compute' }], tools: [{ name: 'calculator', description: 'd', parameters: { type: 'object' } }] };

async function callsThrough(quirk: StreamQuirk | undefined, toolCalls: ScriptedToolCall[], streaming = true) {
  server = await startModelServer({ reply: [{ toolCalls, quirk }] });
  const client = createOpenAIModelClient({ baseUrl: server.url, model: 'm', streaming });
  const response = await client.chat(request, { signal: new AbortController().signal });
  return response.toolCalls.map((call) => ({ name: call.name, args: JSON.parse(call.arguments) as unknown, id: call.id }));
}

const parallel: ScriptedToolCall[] = [
  { name: 'calculator', arguments: { expression: '6*7' } },
  { name: 'read_file', arguments: { path: 'notes/a.txt' } },
];
const sameTool: ScriptedToolCall[] = [
  { name: 'calculator', arguments: { expression: '6*7' } },
  { name: 'calculator', arguments: { expression: '(1+2)^3' } },
];
const expected = (calls: ScriptedToolCall[]) => calls.map((call) => ({ name: call.name, args: call.arguments }));

// Each quirk as its server streams it (test/kit/scripted-model-server.ts, StreamQuirk), through the real openai client.
const quirks: StreamQuirk[] = ['object-arguments', 'repeated-name', 'same-index', 'no-index', 'no-index-no-id', 'cumulative-arguments', 'repeated-final-arguments'];

describe('stream assembly of server quirks, through the openai client', () => {
  it.each(quirks)('%s: two parallel calls of different tools come out as sent', async (quirk) => {
    const calls = await callsThrough(quirk, parallel);
    expect(calls.map(({ name, args }) => ({ name, args }))).toEqual(expected(parallel));
    expect(new Set(calls.map((call) => call.id)).size).toBe(2);
  });

  it.each(quirks)('%s: two parallel calls of the same tool stay two calls', async (quirk) => {
    const calls = await callsThrough(quirk, sameTool);
    expect(calls.map(({ name, args }) => ({ name, args }))).toEqual(expected(sameTool));
  });

  it('a single call with a repeated name is named once (not "calculatorcalculator")', async () => {
    const calls = await callsThrough('repeated-name', [{ name: 'calculator', arguments: { expression: '12345 * 6789 + 1' } }]);
    expect(calls).toEqual([expect.objectContaining({ name: 'calculator', args: { expression: '12345 * 6789 + 1' } })]);
  });

  it('object arguments in a whole (not streamed) completion become JSON text, not "[object Object]"', async () => {
    const calls = await callsThrough('object-arguments', parallel, false);
    expect(calls.map(({ name, args }) => ({ name, args }))).toEqual(expected(parallel));
    expect(server?.chatRequests[0]?.body.stream).toBe(false);
  });

  it('keeps malformed arguments as sent, for the step to report', async () => {
    server = await startModelServer({ reply: [{ toolCalls: [{ name: 'calculator', arguments: '{"expression": "1+' }] }] });
    const response = await createOpenAIModelClient({ baseUrl: server.url, model: 'm' }).chat(request, { signal: new AbortController().signal });
    expect(response.toolCalls).toEqual([expect.objectContaining({ name: 'calculator', arguments: '{"expression": "1+' })]);
  });
});

describe('reasoning apart from the content', () => {
  it.each(['reasoning_content', 'reasoning'] as const)('collects %s deltas into reasoning, streamed and whole', async (field) => {
    for (const streaming of [true, false]) {
      server = await startModelServer({ reply: [{ content: 'forty-two', reasoning: { text: 'The user wants 6*7, which is 42.', field } }] });
      const response = await createOpenAIModelClient({ baseUrl: server.url, model: 'm', streaming }).chat(request, { signal: new AbortController().signal });
      expect(response).toMatchObject({ content: 'forty-two', reasoning: 'The user wants 6*7, which is 42.' });
      await server.close();
      server = undefined;
    }
  });

  it('parses streamed arguments only once they could be whole: a long call in small fragments is not parsed again at every fragment', async () => {
    const args = JSON.stringify({ path: 'notes/long.txt', content: `${'x'.repeat(20_000)} {"nested": [1, 2]} done` });
    const fragments = args.match(/.{1,4}/gs) ?? [];
    async function* chunks(): AsyncGenerator<ChatCompletionChunk> {
      const part = (toolCall: object) => ({ id: 'x', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, finish_reason: null, delta: { tool_calls: [toolCall] } }] }) as ChatCompletionChunk;
      yield part({ index: 0, id: 'c1', function: { name: 'write_file', arguments: '' } });
      for (const fragment of fragments) yield part({ index: 0, function: { arguments: fragment } });
    }
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const reply = await assembleStream(chunks());
      expect(reply.toolCalls).toEqual([{ id: 'c1', name: 'write_file', arguments: args }]);
      expect(fragments.length).toBeGreaterThan(5000);
      expect(parse.mock.calls.length).toBeLessThan(10);
    } finally {
      parse.mockRestore();
    }
  });
});
