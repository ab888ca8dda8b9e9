import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { BuiltinEngines } from '../src/core/model/builtin-engine';
import { engineLauncher } from '../src/hosts/node/engine-launcher';
import { findLlamaServer, startLlamaServer } from '../test/kit/llama-server';
import { writeTinyModel } from '../test/kit/tiny-gguf';
import { line, ms } from './support';

const CLI = fileURLToPath(new URL('../out/node/cli.js', import.meta.url));
const ENGINE = fileURLToPath(new URL('../out/node/engine.js', import.meta.url));
const GOAL = 'Compute 6*7 with the calculator and report it';
const TOKENS = 1000;
const REPEATS = 3;

/** Generation speed as a client sees it: completion tokens over the wall time of whole answers that never end early. */
async function tokensPerSecond(baseUrl: string, apiKey: string | null): Promise<number> {
  let tokens = 0;
  let elapsed = 0;
  for (let repeat = 0; repeat < REPEATS; repeat++) {
    const started = performance.now();
    const response = await fetch(`${baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
      body: JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content: 'Write a long story.' }], max_tokens: TOKENS }),
    });
    const answer = (await response.json()) as { usage?: { completion_tokens?: number } };
    elapsed += performance.now() - started;
    tokens += answer.usage?.completion_tokens ?? 0;
  }
  return tokens / (elapsed / 1000);
}

/** A whole `archon run` of the goal on the tiny model: its wall time and how it ended. */
function runWallTime(modelUrl: string, model: string | null, dir: string): string {
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace, { recursive: true });
  const args = [CLI, 'run', GOAL, '--model-url', modelUrl, ...(model ? ['--model', model] : []), '--data-dir', join(dir, 'data'), '--workspace', workspace, '--approve', 'auto'];
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { stdio: 'ignore', env: { ...process.env, OPENAI_API_KEY: '' } });
  return `${ms(performance.now() - started)} (exit ${result.status})`;
}

async function llamaServerFigures(dir: string, endless: string, tiny: string): Promise<void> {
  const binary = findLlamaServer();
  if (!binary) {
    line('llama-server', 'not built', undefined, 'run node scripts/build-llama-server.mjs');
    return;
  }
  for (const [model, label] of [
    [endless, 'tokens/s'],
    [tiny, 'archon run wall time'],
  ] as const) {
    const server = await startLlamaServer(binary, { model, jinja: true });
    try {
      if (label === 'tokens/s') line(`llama-server (1 thread), ${label}, ${REPEATS}× ${TOKENS} tokens`, (await tokensPerSecond(`${server.url}/v1`, null)).toFixed(0));
      else line(`llama-server --jinja, ${label}`, runWallTime(`${server.url}/v1`, null, join(dir, 'llama-run')));
    } finally {
      await server.close();
    }
  }
}

async function builtinFigures(dir: string, endless: string, tiny: string): Promise<void> {
  const engines = new BuiltinEngines({ launch: engineLauncher(ENGINE), resolveModel: (path) => path });
  try {
    const engine = await engines.ensure(endless, new AbortController().signal);
    line(`built-in engine (1 thread), tokens/s, ${REPEATS}× ${TOKENS} tokens`, (await tokensPerSecond(engine.baseUrl, engine.apiKey)).toFixed(0));
  } finally {
    await engines.close();
  }
  line('built-in engine, archon run wall time', runWallTime('builtin', tiny, join(dir, 'builtin-run')));
}

/** The real engines on the same tiny generated model and prompt: generation speed and a whole run's wall time. */
export async function engineBenchmarks(): Promise<void> {
  process.stdout.write('\n## Real engines (a tiny generated model, one thread)\n');
  const dir = mkdtempSync(join(tmpdir(), 'archon-bench-engines-'));
  try {
    const endless = writeTinyModel(join(dir, 'endless.gguf'), { endless: true });
    // A grammar keeps a random model writing until its context ends: 4,096 tokens bound a run.
    const tiny = writeTinyModel(join(dir, 'tiny.gguf'), { seed: 3, contextLength: 4096 });
    await llamaServerFigures(dir, endless, tiny);
    await builtinFigures(dir, endless, tiny);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
