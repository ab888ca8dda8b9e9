import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenAIModelClient } from '../../../../src/core/model/model-client';
import { parseTextReply } from '../../../../src/core/model/text-protocol';
import { startModelServer, type ScriptedModelServer } from '../../../kit/scripted-model-server';
import { dialectFixtures, type DialectFixture } from '../../../fixtures/dialects';

/** Each fixture's output, sent by the scripted server as the model's raw text and read through the real openai client. */
let server: ScriptedModelServer;
let next: DialectFixture | undefined;
beforeAll(async () => {
  server = await startModelServer({ reply: () => ({ content: next?.output ?? '', reasoning: next?.reasoning }) });
});
afterAll(() => server.close());

const signal = new AbortController().signal;
const client = () => createOpenAIModelClient({ baseUrl: server.url, model: 'm', retry: { windowMs: 0, baseDelayMs: 1, maxDelayMs: 1, firstByteTimeoutMs: 10_000, idleTimeoutMs: 10_000 } });
const specs = (fixture: DialectFixture) => fixture.tools.map((tool) => ({ name: tool.name, description: tool.name, parameters: tool.parameters ?? {} }));
const cases = dialectFixtures.map((fixture) => [`${fixture.dialect}: ${fixture.name}`, fixture] as const);

describe('fixtures end to end through the openai client', () => {
  it.each(cases)('native mode, raw text in the content — %s', async (_label, fixture) => {
    next = fixture;
    const response = await client().chat({ purpose: 'step', messages: [{ role: 'user', content: 'go' }], tools: specs(fixture) }, { signal });
    expect(response.dialect).toBe(fixture.dialect);
    expect(response.toolCalls.map((call) => ({ name: call.name, arguments: JSON.parse(call.arguments) as unknown }))).toEqual(fixture.calls);
  });

  it.each(cases)('text mode — %s', async (_label, fixture) => {
    next = fixture;
    const response = await client().chat({ purpose: 'step', messages: [{ role: 'user', content: 'go' }] }, { signal });
    const reply = parseTextReply(response.content, { tools: fixture.tools, reasoning: response.reasoning });
    expect(reply).toEqual({ kind: 'action', dialect: fixture.dialect, calls: fixture.calls.map((call) => ({ tool: call.name, arguments: call.arguments })) });
  });
});
