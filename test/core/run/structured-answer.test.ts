import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ModelMode } from '../../../src/core/model/chat';
import type { DialectName } from '../../../src/core/model/dialects/dialect-names';
import { grammarSafeSchema } from '../../../src/core/model/grammar-safe-schema';
import { createOpenAIModelClient } from '../../../src/core/model/model-client';
import { askStructured, type StructuredRequest } from '../../../src/core/run/structured-answer';
import { FAMILY_WRITERS } from '../../fixtures/dialects/writers';
import { startModelServer, toolMessagesOf, type RecordedRequest, type ScriptedModelServer, type ScriptedReply } from '../../kit/scripted-model-server';

const VerdictSchema = z.object({ verdict: z.enum(['pass', 'fail']), gap: z.number().min(0).max(1), reason: z.string().min(1) });
type Verdict = z.output<typeof VerdictSchema>;
const PASS: Verdict = { verdict: 'pass', gap: 0.1, reason: 'It adds up.' };
const hermes = FAMILY_WRITERS.find((writer) => writer.family === 'Hermes / Qwen 2.5');

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type Options = Partial<Omit<StructuredRequest<typeof VerdictSchema, unknown>, 'mode'>> & { mode: ModelMode };

/** Asks the scripted server for a verdict through the real model client (the openai SDK). */
async function ask(replies: ScriptedReply[], options: Options) {
  server = await startModelServer({ reply: replies });
  const client = createOpenAIModelClient({ baseUrl: server.url, model: 'm', retry: { windowMs: 0, baseDelayMs: 1, maxDelayMs: 1, firstByteTimeoutMs: 10_000, idleTimeoutMs: 10_000 } });
  const dialects: DialectName[] = [];
  const answer = await askStructured((request) => client.chat({ purpose: 'critic', ...request }, { signal: new AbortController().signal }), {
    tool: { name: 'submit_verdict', description: 'Submit the verdict.', schema: VerdictSchema },
    noun: 'verdict',
    label: 'Verdict',
    messages: [
      { role: 'system', content: 'Judge the result.' },
      { role: 'user', content: 'Result to judge: 2 + 2 = 4' },
    ],
    maxRepairs: 1,
    onDialect: (dialect) => dialects.push(dialect),
    ...options,
  });
  return { answer, dialects, requests: server.chatRequests };
}

function lastMessage(request: RecordedRequest | undefined) {
  return request?.body.messages?.at(-1);
}

describe('askStructured (scripted server, real openai client)', () => {
  it("native: offers the tool with its zod schema's JSON Schema and reads the call", async () => {
    const { answer, requests } = await ask([{ toolCalls: [{ name: 'submit_verdict', arguments: PASS }] }], { mode: 'native' });
    expect(answer).toMatchObject({ ok: true, value: PASS });
    expect(requests).toHaveLength(1);
    const [offered] = requests[0]?.body.tools ?? [];
    expect(offered?.function.name).toBe('submit_verdict');
    expect(offered?.function.parameters).toEqual(grammarSafeSchema(JSON.parse(JSON.stringify(z.toJSONSchema(VerdictSchema, { io: 'input' })))));
    expect(requests[0]?.body.tool_choice).toBe('required');
  });

  it('text: asks for the schema as the answer and reads a reply that is one object', async () => {
    const { answer, requests } = await ask([{ content: JSON.stringify(PASS) }], { mode: 'text', labelRequired: true });
    expect(answer).toMatchObject({ ok: true, value: PASS });
    expect(requests[0]?.body.tools).toBeUndefined();
    expect(requests[0]?.body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'submit_verdict', schema: grammarSafeSchema(z.toJSONSchema(VerdictSchema, { io: 'input' }) as Record<string, unknown>) } });
  });

  it('native: a call a local model wrote in its own dialect in the content is read by the model client once', async () => {
    const { answer, dialects } = await ask([{ content: hermes?.call('submit_verdict', PASS) ?? '' }], { mode: 'native' });
    expect(answer).toMatchObject({ ok: true, value: PASS, response: { dialect: 'hermes' } });
    expect(dialects).toEqual([]);
  });

  it('text: a call in the model’s own dialect is read, no tool is offered, and the dialect is told', async () => {
    const { answer, dialects, requests } = await ask([{ content: hermes?.call('submit_verdict', PASS) ?? '' }], { mode: 'text' });
    expect(answer).toMatchObject({ ok: true, value: PASS });
    expect(requests[0]?.body.tools).toBeUndefined();
    expect(dialects).toEqual(['hermes']);
  });

  it('text: the labelled line counts, not JSON in the reasoning the model client moved aside', async () => {
    const draft = JSON.stringify({ verdict: 'fail', gap: 1, reason: 'draft' });
    const { answer } = await ask([{ content: `<think>Verdict: ${draft}</think>I checked the sum.\nVerdict: ${JSON.stringify(PASS)}` }], { mode: 'text' });
    expect(answer).toMatchObject({ ok: true, value: PASS });
  });

  it('text: without a required label, the first JSON object of the reply is the answer', async () => {
    const { answer } = await ask([{ content: `Here it is: ${JSON.stringify(PASS)}` }], { mode: 'text', label: undefined });
    expect(answer).toMatchObject({ ok: true, value: PASS });
  });

  it('repairs broken JSON with jsonrepair, in a labelled line and in native arguments, without asking again', async () => {
    const text = await ask([{ content: "Verdict: {'verdict': 'pass', gap: 0.1, \"reason\": \"It adds up.\",}" }], { mode: 'text' });
    expect(text.answer).toMatchObject({ ok: true, value: PASS });
    expect(text.requests).toHaveLength(1);
    await server?.close();
    const native = await ask([{ toolCalls: [{ name: 'submit_verdict', arguments: '{"verdict": "pass", "gap": 0.1, "reason": "It adds up."' }] }], { mode: 'native' });
    expect(native.answer).toMatchObject({ ok: true, value: PASS });
    expect(native.requests).toHaveLength(1);
  });

  it('feeds a schema violation back as the result of the call that made it, and takes the repaired answer', async () => {
    const { answer, requests } = await ask(
      [{ toolCalls: [{ id: 'call_first', name: 'submit_verdict', arguments: { ...PASS, gap: 2 } }] }, { toolCalls: [{ name: 'submit_verdict', arguments: PASS }] }],
      { mode: 'native' },
    );
    expect(answer).toMatchObject({ ok: true, value: PASS });
    expect(requests).toHaveLength(2);
    expect(toolMessagesOf(requests[1] as RecordedRequest)).toEqual([expect.stringMatching(/^The verdict does not match its schema: gap: .*1.* Submit the verdict again\.$/)]);
    expect(lastMessage(requests[1])).toMatchObject({ role: 'tool', tool_call_id: 'call_first' });
  });

  it("feeds the caller's own check back and returns what the check made of the answer", async () => {
    const { answer, requests } = await ask([{ toolCalls: [{ name: 'submit_verdict', arguments: { ...PASS, gap: 0.9 } }] }, { toolCalls: [{ name: 'submit_verdict', arguments: PASS }] }], {
      mode: 'native',
      check: (verdict) => (verdict.verdict === 'pass' && verdict.gap > 0.5 ? { ok: false, errors: ['A pass leaves a gap under 0.5.'] } : { ok: true, value: verdict.verdict }),
    });
    expect(answer).toMatchObject({ ok: true, value: 'pass' });
    expect(toolMessagesOf(requests[1] as RecordedRequest)).toEqual(['The verdict was refused: A pass leaves a gap under 0.5. Submit the verdict again.']);
  });

  it('gives up after its repairs with a result that says what was wrong with the last answer', async () => {
    const { answer, requests } = await ask(
      [{ content: 'I think it passes.' }, { content: `The result said ${JSON.stringify(PASS)}` }, { content: 'Verdict: {"verdict": "maybe", "gap": 0.1, "reason": "unsure"}' }],
      { mode: 'text', labelRequired: true, maxRepairs: 2 },
    );
    expect(answer).toMatchObject({ ok: false, attempts: 3, error: expect.stringMatching(/^The verdict does not match its schema: verdict: /) });
    expect(requests).toHaveLength(3);
    const noVerdict = 'No verdict was found. Answer with submit_verdict (or a line "Verdict: {…}"). Submit the verdict again.';
    expect(lastMessage(requests[1])).toEqual({ role: 'user', content: noVerdict });
    expect(lastMessage(requests[2])).toEqual({ role: 'user', content: noVerdict });
  });
});
