import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { RunEventSchema, type RunEvent } from '../../../src/shared/schemas/events';
import { writeTinyModel } from '../../kit/tiny-gguf';
import { runArchon, spawnArchon } from '../../support/archon-process';
import { llamaServerMissing, useLlamaServer } from '../../support/llama-server';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
const startLlamaServer = useLlamaServer();
const GOAL = 'Compute 6*7 with the calculator and report it';
const missing = llamaServerMissing();
/** A bound, not a measure: a whole run on one shared core, a model generating thousands of tokens. */
const RUN_BOUND_MS = 180_000;

interface ModelCallRow {
  purpose: string;
  status: string;
  prompt_tokens: number;
  completion_tokens: number;
  usage_estimated: number;
  error: string | null;
}

/** `archon run` against llama-server serving the tiny generated model; the events and the recorded model calls. */
async function runAgainst(baseUrl: string, extra: string[] = []) {
  const dataDir = tempDir();
  const result = await spawnArchon(['run', GOAL, '--model-url', baseUrl, '--data-dir', dataDir, '--workspace', tempDir(), '--approve', 'auto', '--json', ...extra], { OPENAI_API_KEY: '' }).done;
  const events: RunEvent[] = result.stdout.trim().split('\n').filter(Boolean).map((line) => RunEventSchema.parse(JSON.parse(line)));
  const db = new Database(join(dataDir, 'archon.db'), { readonly: true });
  const calls = db.prepare('SELECT purpose, status, prompt_tokens, completion_tokens, usage_estimated, error FROM model_calls').all() as ModelCallRow[];
  db.close();
  return { result, events, calls };
}

// Protocol facts only: what llama-server accepted and how the run ended, never what the random model said.
describe.skipIf(missing !== null)(`a real engine: llama.cpp's llama-server serving a tiny generated model${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('--jinja: native calls, no request refused, the planning call completes with counted tokens, the run ends by itself', async () => {
    const model = writeTinyModel(join(tempDir(), 'tiny.gguf'), { seed: 3 });
    const server = await startLlamaServer({ model, jinja: true });
    const { result, events, calls } = await runAgainst(server.baseUrl, ['--verify', 'critic']);
    expect([0, 1], `${result.stderr}\n${server.output().slice(-2000)}`).toContain(result.status);
    expect(events.find((event) => event.type === 'model.probed')).toMatchObject({ toolCalling: true });
    expect(server.requests.filter((request) => request.status >= 400)).toEqual([]);
    const planning = server.requests.filter((request) => request.purpose === 'plan');
    expect(planning.length).toBeGreaterThan(0);
    expect(JSON.parse(planning[0]?.body ?? '{}')).toMatchObject({ tool_choice: 'required', tools: [{ function: { name: 'submit_plan' } }] });
    const plannedCalls = calls.filter((call) => call.purpose === 'plan');
    expect(plannedCalls.length).toBeGreaterThan(0);
    expect(plannedCalls.every((call) => call.status === 'completed' && call.usage_estimated === 0 && call.prompt_tokens > 0 && call.completion_tokens > 0)).toBe(true);
    expect(['run.completed', 'run.failed']).toContain(events.at(-1)?.type);
  }, RUN_BOUND_MS);

  it('--no-jinja: the probe chooses the text protocol, plans are asked under a JSON schema, and the run ends by itself', async () => {
    const model = writeTinyModel(join(tempDir(), 'tiny.gguf'), { seed: 3 });
    const server = await startLlamaServer({ model, jinja: false });
    const { result, events, calls } = await runAgainst(server.baseUrl);
    expect([0, 1], `${result.stderr}\n${server.output().slice(-2000)}`).toContain(result.status);
    expect(events.find((event) => event.type === 'model.probed')).toMatchObject({ toolCalling: false, reason: expect.stringMatching(/--jinja/) });
    // Only the probe's request with tools is refused (that refusal is how text mode is chosen).
    expect(server.requests.filter((request) => request.status >= 400 && request.purpose !== 'probe')).toEqual([]);
    const planning = server.requests.filter((request) => request.purpose === 'plan');
    expect(planning.length).toBeGreaterThan(0);
    expect(planning.every((request) => request.status === 200 && JSON.parse(request.body).response_format?.type === 'json_schema' && JSON.parse(request.body).tools === undefined)).toBe(true);
    expect(calls.filter((call) => call.purpose === 'plan').every((call) => call.status === 'completed' && call.usage_estimated === 0)).toBe(true);
    expect(['run.completed', 'run.failed']).toContain(events.at(-1)?.type);
  }, RUN_BOUND_MS);
  it('`archon estop` aborts a generation in progress: llama-server cancels the task and the run ends stopped', async () => {
    // An endless model writes until its context ends: the stop lands while the first plan is generating.
    const model = writeTinyModel(join(tempDir(), 'endless.gguf'), { endless: true, contextLength: 16_384 });
    const server = await startLlamaServer({ model, jinja: true, contextSize: 16_384 });
    const dataDir = tempDir();
    const { done } = spawnArchon(['run', GOAL, '--model-url', server.baseUrl, '--data-dir', dataDir, '--workspace', tempDir(), '--approve', 'auto'], { OPENAI_API_KEY: '' });
    // A streamed answer's headers arrive when generation starts: the observer records the request then.
    for (let tries = 0; tries < 1200 && !server.requests.some((request) => request.purpose === 'plan'); tries++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(runArchon(['estop', '--data-dir', dataDir]).status).toBe(0);
    const result = await done;
    expect(result.status, result.stderr).toBe(3);
    // llama-server notices the closed connection at its next token and says so.
    for (let tries = 0; tries < 200 && !/cancel task/.test(server.output()); tries++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.output()).toMatch(/cancel task/);
  }, RUN_BOUND_MS);
});
