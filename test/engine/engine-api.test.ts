import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BuiltinEngines, type RunningEngine } from '../../src/core/model/builtin-engine';
import { EngineStatsSchema } from '../../src/shared/engine-protocol';
import { ArchonError } from '../../src/shared/errors';
import { engineLauncher } from '../../src/hosts/node/engine-launcher';
import { writeTinyModel } from '../kit/tiny-gguf';
import { builtFile } from '../support/built';

/** The built engine (out/node/engine.js) started the way the CLI starts it, on tiny real models; asked through the real `openai` client. */

const CALCULATOR = {
  type: 'function' as const,
  function: { name: 'calculator', description: 'Evaluates an arithmetic expression.', parameters: { type: 'object', properties: { expression: { type: 'string', maxLength: 40 } }, required: ['expression'], additionalProperties: false } },
};

let dir: string;
let engines: BuiltinEngines;
let engine: RunningEngine;
let endless: RunningEngine;

const clientOf = (running: RunningEngine, apiKey = running.apiKey) => new OpenAI({ baseURL: running.baseUrl, apiKey, maxRetries: 0 });
const ask = (running: RunningEngine, path: string, init: RequestInit = {}) => fetch(new URL(path, running.baseUrl.replace(/\/v1$/, '/')), init);

async function stats(running: RunningEngine) {
  const response = await ask(running, 'archon/stats', { headers: { authorization: `Bearer ${running.apiKey}` } });
  return EngineStatsSchema.parse(await response.json());
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'archon-engine-'));
  engines = new BuiltinEngines({ launch: engineLauncher(builtFile('node/engine.js')), resolveModel: (path) => path });
  const signal = AbortSignal.timeout(60_000);
  engine = await engines.ensure(writeTinyModel(join(dir, 'tiny.gguf')), signal);
  endless = await engines.ensure(writeTinyModel(join(dir, 'endless.gguf'), { endless: true }), signal);
}, 90_000);

afterAll(async () => {
  await engines.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the built-in engine', () => {
  it('lists its one model with its context (vLLM max_model_len), the id it reported when ready', async () => {
    const models = await clientOf(engine).models.list();
    expect(models.data.map((model) => model.id)).toEqual([engine.model]);
    expect((models.data[0] as unknown as { max_model_len: number }).max_model_len).toBe(engine.contextLength);
    expect(engine.contextLength).toBeGreaterThan(0);
    expect(engine.slots).toBeGreaterThanOrEqual(1);
  });

  it('requires its bearer token on every route, answering 401 in OpenAI\'s error shape', async () => {
    for (const path of ['v1/models', 'v1/chat/completions', 'archon/stats', 'nowhere']) {
      const response = await ask(engine, path, { headers: { authorization: 'Bearer wrong' } });
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ error: { type: 'authentication_error', message: expect.any(String) } });
    }
    expect((await ask(engine, 'v1/models')).status).toBe(401);
    await expect(clientOf(engine, 'not-the-token').models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('answers a whole chat completion with usage the engine counted', async () => {
    const answer = await clientOf(engine).chat.completions.create({ model: engine.model, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say hello.' }], max_tokens: 16 });
    expect(answer.object).toBe('chat.completion');
    expect(answer.choices[0]?.message.role).toBe('assistant');
    expect(['stop', 'length']).toContain(answer.choices[0]?.finish_reason);
    expect(answer.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(answer.usage?.completion_tokens).toBeGreaterThan(0);
    expect(answer.usage?.completion_tokens).toBeLessThanOrEqual(16);
    expect(answer.usage?.total_tokens).toBe((answer.usage?.prompt_tokens ?? 0) + (answer.usage?.completion_tokens ?? 0));
  });

  it('streams a chat completion as server-sent events, ending with a finish reason and the usage chunk asked for', async () => {
    const stream = await clientOf(engine).chat.completions.create({ model: engine.model, messages: [{ role: 'user', content: 'Count to three.' }], max_tokens: 24, stream: true, stream_options: { include_usage: true } });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
    const finished = chunks.filter((chunk) => chunk.choices[0]?.finish_reason);
    expect(finished).toHaveLength(1);
    const usage = chunks.at(-1)?.usage;
    expect(chunks.at(-1)?.choices).toEqual([]);
    expect(usage?.prompt_tokens).toBeGreaterThan(0);
    expect(usage?.completion_tokens).toBeGreaterThan(0);
    expect(usage?.completion_tokens).toBeLessThanOrEqual(24);
  });

  it('offered tools, answers with a call of one (arguments that parse) or with text', async () => {
    const answer = await clientOf(engine).chat.completions.create({ model: engine.model, messages: [{ role: 'user', content: 'What is 6*7? Use the calculator.' }], tools: [CALCULATOR], max_tokens: 64 });
    const choice = answer.choices[0];
    const calls = choice?.message.tool_calls ?? [];
    if (calls.length > 0) {
      expect(choice?.finish_reason).toBe('tool_calls');
      for (const call of calls) {
        expect(call.type === 'function' && call.function.name).toBe('calculator');
        expect(call.type === 'function' && typeof JSON.parse(call.function.arguments)).toBe('object');
      }
    } else expect(typeof choice?.message.content).toBe('string');
  });

  it('with tool_choice required, calls the tool with arguments its schema allows (the call made under a grammar)', async () => {
    const answer = await clientOf(engine).chat.completions.create({ model: engine.model, messages: [{ role: 'user', content: 'What is 6*7?' }], tools: [CALCULATOR], tool_choice: 'required', max_tokens: 200 });
    const call = answer.choices[0]?.message.tool_calls?.[0];
    expect(answer.choices[0]?.finish_reason).toBe('tool_calls');
    expect(call?.type === 'function' && call.function.name).toBe('calculator');
    const args = call?.type === 'function' ? (JSON.parse(call.function.arguments) as unknown) : null;
    expect(z.object({ expression: z.string().max(40) }).strict().safeParse(args).success).toBe(true);
  });

  it('streams a call it writes under a grammar as progress chunks, then the call whole, its optional arguments left out when the model wrote null', async () => {
    const search = { type: 'function' as const, function: { name: 'search', description: 'Searches.', parameters: { type: 'object', properties: { query: { type: 'string', maxLength: 30 }, limit: { type: 'integer' } }, required: ['query'] } } };
    const stream = await clientOf(engine).chat.completions.create({ model: engine.model, messages: [{ role: 'user', content: 'Search.' }], tools: [search], tool_choice: 'required', max_tokens: 300, stream: true });
    const deltas: Record<string, unknown>[] = [];
    for await (const chunk of stream) if (chunk.choices[0]) deltas.push(chunk.choices[0].delta as Record<string, unknown>);
    const firstCall = deltas.findIndex((delta) => 'tool_calls' in delta);
    expect(firstCall).toBeGreaterThan(0);
    // Before the call: the role chunk, then at least one chunk that only says the generation goes on.
    expect(deltas.slice(1, firstCall).some((delta) => Object.keys(delta).length === 0)).toBe(true);
    const args = JSON.parse(deltas.flatMap((delta) => (delta.tool_calls as { function?: { arguments?: string } }[] | undefined) ?? []).map((call) => call.function?.arguments ?? '').join('')) as Record<string, unknown>;
    expect(z.object({ query: z.string().max(30), limit: z.int().optional() }).strict().safeParse(args).success).toBe(true);
    expect(Object.values(args)).not.toContain(null);
  });

  it('with response_format json_schema, answers JSON that satisfies the schema', async () => {
    const schema = { type: 'object', properties: { ok: { type: 'boolean' }, colour: { enum: ['red', 'green'] }, note: { type: 'string', maxLength: 12 } }, required: ['ok', 'colour', 'note'] };
    const answer = await clientOf(engine).chat.completions.create({ model: engine.model, messages: [{ role: 'user', content: 'Describe the sky as JSON.' }], response_format: { type: 'json_schema', json_schema: { name: 'sky', schema } }, max_tokens: 200 });
    const parsed = JSON.parse(answer.choices[0]?.message.content ?? '') as unknown;
    expect(z.object({ ok: z.boolean(), colour: z.enum(['red', 'green']), note: z.string().max(12) }).safeParse(parsed).success).toBe(true);
  });

  it('refuses what it cannot serve in OpenAI\'s error shape: a body that is not a chat request, a route it does not have', async () => {
    const headers = { authorization: `Bearer ${engine.apiKey}`, 'content-type': 'application/json' };
    const invalid = await ask(engine, 'v1/chat/completions', { method: 'POST', headers, body: JSON.stringify({ messages: [] }) });
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
    const notJson = await ask(engine, 'v1/chat/completions', { method: 'POST', headers, body: '{' });
    expect(notJson.status).toBe(400);
    const missing = await ask(engine, 'v1/embeddings', { method: 'POST', headers, body: '{}' });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { type: 'not_found_error' } });
  });

  it('aborts a generation when its client goes, by its own count, and serves the next request on the freed sequence', async () => {
    const before = await stats(endless);
    const controller = new AbortController();
    const stream = await clientOf(endless).chat.completions.create({ model: endless.model, messages: [{ role: 'user', content: 'Go on forever.' }], stream: true }, { signal: controller.signal });
    let content = 0;
    // The SDK ends an aborted stream quietly.
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) content++;
      if (content >= 3) controller.abort();
    }
    expect(content).toBe(3);
    await expect.poll(async () => (await stats(endless)).aborted).toBe(before.aborted + 1);
    const last = (await stats(endless)).last;
    expect(last?.outcome).toBe('aborted');
    expect(last?.maxTokens).toBe(endless.contextLength);
    expect(last?.completionTokens).toBeLessThan(last?.maxTokens ?? 0);
    // One sequence: the next request runs only if the aborted one gave it back.
    const next = await clientOf(endless).chat.completions.create({ model: endless.model, messages: [{ role: 'user', content: 'Again.' }], max_tokens: 8 });
    expect(next.choices[0]?.finish_reason).toBe('length');
    expect(next.usage?.completion_tokens).toBe(8);
  });

  it('is started once per model file: later runs share it; a wait ended by its signal leaves the engine to the next', async () => {
    expect(await engines.ensure(engine.model, AbortSignal.timeout(10_000))).toEqual(engine);
    const path = writeTinyModel(join(dir, 'other.gguf'), { seed: 2 });
    const stopped = new AbortController();
    stopped.abort(new Error('the run was stopped'));
    await expect(engines.ensure(path, stopped.signal)).rejects.toThrow('the run was stopped');
    const other = await engines.ensure(path, AbortSignal.timeout(60_000));
    expect(other.baseUrl).not.toBe(engine.baseUrl);
    expect((await clientOf(other).models.list()).data[0]?.id).toBe(path);
    await expect(engines.ensure('', AbortSignal.timeout(1000))).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringContaining('--model PATH.gguf') });
  });

  it('says what to do when the model cannot be loaded: a missing file, a file that is not GGUF, a GGUF file cut short', async () => {
    const notGguf = join(dir, 'notes.gguf');
    writeFileSync(notGguf, 'not a model at all');
    const cutShort = join(dir, 'cut.gguf');
    writeFileSync(cutShort, readFileSync(join(dir, 'tiny.gguf')).subarray(0, 2000));
    for (const path of [join(dir, 'absent.gguf'), notGguf, cutShort]) {
      const failure = await engines.ensure(path, AbortSignal.timeout(60_000)).catch((error: unknown) => error);
      expect(ArchonError.isInstance(failure) && failure.code).toBe('CONFIG_INVALID');
      expect((failure as Error).message).toMatch(/could not load .* Download the model again \(Models, or `archon models pull NAME`\), or choose another\./);
    }
  });
});
