import { afterEach, describe, expect, it } from 'vitest';
import { modelConnector } from '../../../src/core/model/connect';
import { PROBE_LIFETIME_MS, ProbeCache } from '../../../src/core/model/probe-cache';
import type { RunOptions } from '../../../src/shared/schemas/run';
import { startModelServer, type ScriptedModelServer, type ScriptedReply } from '../../kit/scripted-model-server';
import { useRuntimes } from '../../support/runtime';

const openRuntime = useRuntimes();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const signal = () => new AbortController().signal;
const probesSent = () => (server?.requests ?? []).filter((request) => request.purpose === 'probe').length;
const optionsFor = (url: string): RunOptions => ({ modelUrl: url, model: '', policy: 'balanced', concurrency: null, maxTokens: null, maxCostUsd: null, workspace: '/tmp', maxIterations: 10, verification: 'checks', repairBudget: 2, maxReplans: 3 });
const connect = modelConnector({ retry: { windowMs: 100, baseDelayMs: 10, maxDelayMs: 20, firstByteTimeoutMs: 5000, idleTimeoutMs: 5000 } });
const ask = (options: RunOptions, probes: ProbeCache) => connect(options, signal(), { probes });
const chat = { purpose: 'step' as const, messages: [{ role: 'user' as const, content: 'hi' }] };

describe('the probe cache', () => {
  it('a second connection to the same server and model within the lifetime sends no probe request, and says none was sent', async () => {
    server = await startModelServer({ reply: [], llamaCpp: { contextLength: 8192, slots: 3 } });
    const probes = openRuntime().store.runs.probes;
    const first = await ask(optionsFor(server.url), probes);
    const sent = probesSent();
    expect(first.requests).toHaveLength(sent);
    const second = await ask(optionsFor(server.url), probes);
    expect(probesSent()).toBe(sent);
    expect(second.requests).toEqual([]);
    expect(second.probe).toEqual(first.probe);
  });

  it("is kept for the model the probe settled on too: a resumed run, which names it, sends no probe request", async () => {
    server = await startModelServer({ reply: [], models: ['first-model', 'second-model'] });
    const probes = openRuntime().store.runs.probes;
    expect((await ask(optionsFor(server.url), probes)).probe.model).toBe('first-model');
    const sent = probesSent();
    expect((await ask({ ...optionsFor(server.url), model: 'first-model' }, probes)).requests).toEqual([]);
    expect(probesSent()).toBe(sent);
  });

  it('is kept in archon.db: another process on the same data dir finds it; past its lifetime, or with another context setting, the server is probed again', async () => {
    server = await startModelServer({ reply: [] });
    const runtime = openRuntime();
    const key = { baseUrl: server.url, model: '', contextSetting: null };
    const first = await ask(optionsFor(server.url), runtime.store.runs.probes);
    const later = (ms: number) => new ProbeCache(runtime.store.db, PROBE_LIFETIME_MS, () => new Date(Date.now() + ms));
    expect(later(PROBE_LIFETIME_MS - 60_000).get(key)).toEqual(first.probe);
    expect(later(PROBE_LIFETIME_MS + 1000).get(key)).toBeNull();
    expect(runtime.store.runs.probes.get({ ...key, contextSetting: 4096 })).toBeNull();
  });

  it.each([
    ['tool calling refused', { status: 400, message: 'registry.ollama.ai/library/scripted-model does not support tools' }],
    ['the model gone', { status: 404, message: 'model "scripted-model" not found, try pulling it first' }],
    ['a context smaller than the probe found', { status: 400, message: 'the request exceeds the available context size, try increasing it' }],
  ] as [string, ScriptedReply][])('a call that fails for a reason the probe would catch (%s) forgets it: the next connection probes again', async (_, failure) => {
    server = await startModelServer({ reply: [failure] });
    const probes = openRuntime().store.runs.probes;
    const { model } = await ask(optionsFor(server.url), probes);
    await expect(model.chat(chat, { signal: signal() })).rejects.toMatchObject({ code: 'MODEL_CALL_FAILED' });
    const sent = probesSent();
    expect((await ask(optionsFor(server.url), probes)).requests.length).toBeGreaterThan(0);
    expect(probesSent()).toBeGreaterThan(sent);
  });

  it('a call that fails for another reason keeps it', async () => {
    server = await startModelServer({ reply: [{ status: 400, message: 'Invalid value for temperature' }] });
    const probes = openRuntime().store.runs.probes;
    const { model } = await ask(optionsFor(server.url), probes);
    await expect(model.chat(chat, { signal: signal() })).rejects.toMatchObject({ code: 'MODEL_CALL_FAILED' });
    const sent = probesSent();
    expect((await ask(optionsFor(server.url), probes)).requests).toEqual([]);
    expect(probesSent()).toBe(sent);
  });
});
