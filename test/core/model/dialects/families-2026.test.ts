import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { probeEndpoint } from '../../../../src/core/model/endpoint-probe';
import { createOpenAIModelClient } from '../../../../src/core/model/model-client';
import { readToolCalls } from '../../../../src/core/model/dialects/read-tool-calls';
import { parseTextReply } from '../../../../src/core/model/text-protocol';
import { startModelServer, type ScriptedModelServer } from '../../../kit/scripted-model-server';
import { tool } from '../../../fixtures/dialects/fixture';
import { jsonAgentAnswers, lmStudioNoModel, proseAfterObservation, type AnswerFixture, type ServerAnswerFixture } from '../../../fixtures/dialects';

const tools = [tool('calculator', { expression: 'string' }), tool('search', { query: 'string' })];
const signal = () => new AbortController().signal;
const retry = { windowMs: 0, baseDelayMs: 1, maxDelayMs: 1, firstByteTimeoutMs: 10_000, idleTimeoutMs: 10_000 };

describe('edges of the new readers', () => {
  it("a plain Action Input fills the tool's one required string parameter, and only that", () => {
    const two = { name: 'write_file', parameters: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] } };
    expect(readToolCalls('Action: calculator\nAction Input: 6*7', tools)?.calls).toEqual([{ name: 'calculator', arguments: '{"expression":"6*7"}' }]);
    // Two required strings: the text is passed on as it is, for the schema check to explain.
    expect(readToolCalls('Action: write_file\nAction Input: notes.txt', [two])?.calls[0]?.arguments).not.toMatch(/^\{/);
  });

  it('a tool definition echoed inside prose is not a call', () => {
    const echoed = 'You gave me {"type": "function", "function": {"name": "calculator", "description": "math"}} to use.';
    expect(readToolCalls(echoed, tools)).toBeNull();
  });

  it('a call in a new dialect counts only for offered tools', () => {
    expect(readToolCalls('<|tools_prefix|>[{"rm_rf": {"path": "/"}}]<|tools_suffix|>', tools)).toBeNull();
    expect(readToolCalls('Action: rm_rf\nAction Input: /', tools)).toBeNull();
  });
});

describe('answers without "Final Answer:" in text mode', () => {
  it.each(jsonAgentAnswers.map((fixture) => [fixture.name, fixture] as const))('LangChain JSON agent — %s', (_name, fixture) => {
    expect(parseTextReply(fixture.output, { tools })).toEqual({ kind: 'final', answer: fixture.answer });
  });

  it.each(proseAfterObservation.map((fixture) => [fixture.name, fixture] as const))('prose after an Observation is the answer — %s', (_name, fixture) => {
    expect(parseTextReply(fixture.output, { tools, afterObservation: true })).toEqual({ kind: 'final', answer: fixture.answer });
  });

  it('prose before any tool has run, or that only announces a call, still asks for the format', () => {
    expect(parseTextReply('The answer is 42.', { tools }).kind).toBe('invalid');
    expect(parseTextReply('Let me use the calculator to multiply them.', { tools, afterObservation: true }).kind).toBe('invalid');
    expect(parseTextReply('I will call calculator next:', { tools, afterObservation: true }).kind).toBe('invalid');
  });
});

describe('answers through the openai client', () => {
  let server: ScriptedModelServer;
  let next: AnswerFixture | undefined;
  beforeAll(async () => {
    server = await startModelServer({ reply: () => ({ content: next?.output ?? '' }) });
  });
  afterAll(() => server.close());

  it.each([...jsonAgentAnswers, ...proseAfterObservation].map((fixture) => [fixture.name, fixture] as const))('%s', async (_name, fixture) => {
    next = fixture;
    const client = createOpenAIModelClient({ baseUrl: server.url, model: 'm', retry });
    const response = await client.chat({ purpose: 'step', messages: [{ role: 'user', content: 'go' }] }, { signal: signal() });
    expect(parseTextReply(response.content, { tools, afterObservation: true })).toEqual({ kind: 'final', answer: fixture.answer });
  });

  it('native mode: a JSON agent\'s "Final Answer" action is the answer, not its JSON', async () => {
    next = jsonAgentAnswers[0];
    const client = createOpenAIModelClient({ baseUrl: server.url, model: 'm', retry });
    const specs = tools.map((offered) => ({ name: offered.name, description: offered.name, parameters: offered.parameters ?? {} }));
    const response = await client.chat({ purpose: 'step', messages: [{ role: 'user', content: 'go' }], tools: specs }, { signal: signal() });
    expect(response).toMatchObject({ content: jsonAgentAnswers[0]?.answer, toolCalls: [] });
  });
});

/** A server that answers /models and /chat/completions as LM Studio does with no model loaded (or /models fine, when `modelsFine`). */
async function lmStudio(fixture: ServerAnswerFixture, modelsFine: boolean): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const fine = modelsFine && (request.url ?? '').endsWith('/models');
    response.writeHead(fine ? 200 : fixture.status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(fine ? { object: 'list', data: [{ id: 'qwen3-8b', object: 'model' }] } : fixture.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return { url, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('LM Studio with no model loaded', () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
  });
  const cases = lmStudioNoModel.map((fixture) => [`${fixture.name} (${fixture.source})`, fixture] as const);
  const clear = /has no model loaded \(".+"\)\. Load one \(LM Studio: the Developer page, or `lms load <model>`\)/;

  it.each(cases)('GET /models — %s', async (_name, fixture) => {
    const server = await lmStudio(fixture, false);
    closers.push(server.close);
    await expect(probeEndpoint({ baseUrl: server.url, model: 'qwen3-8b', signal: signal() })).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringMatching(clear) });
  });

  it.each(cases)('POST /chat/completions in the probe — %s', async (_name, fixture) => {
    const server = await lmStudio(fixture, true);
    closers.push(server.close);
    await expect(probeEndpoint({ baseUrl: server.url, signal: signal() })).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringMatching(clear) });
  });

  it.each(cases)('a chat call mid-run — %s', async (_name, fixture) => {
    const server = await lmStudio(fixture, true);
    closers.push(server.close);
    const client = createOpenAIModelClient({ baseUrl: server.url, model: 'qwen3-8b', retry });
    await expect(client.chat({ purpose: 'step', messages: [{ role: 'user', content: 'go' }] }, { signal: signal() })).rejects.toMatchObject({ message: expect.stringMatching(clear) });
  });
});
