import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { ENGINE_LOG_ENV } from '../../../src/engine/generation-stats';
import { BUILTIN_MODEL_URL } from '../../../src/shared/model-presets';
import { writeTinyModel } from '../../kit/tiny-gguf';
import { runArchon, spawnArchon } from '../../support/archon-process';
import { useTempDirs } from '../../support/temp-dir';

/** `archon run --model-url builtin` end to end: the built CLI starts the built engine on a tiny real model, no server anywhere. */

const tempDir = useTempDirs();
const GOAL = 'Compute 6*7 with the calculator and report it';

function modelCalls(dataDir: string) {
  const db = new Database(join(dataDir, 'archon.db'), { readonly: true });
  try {
    return {
      calls: db.prepare('SELECT purpose, status, prompt_tokens AS prompt, completion_tokens AS completion FROM model_calls').all() as { purpose: string; status: string; prompt: number; completion: number }[],
      options: (db.prepare('SELECT options_json FROM runs').all() as { options_json: string }[]).map((row) => JSON.parse(row.options_json) as { modelUrl: string; model: string }),
    };
  } finally {
    db.close();
  }
}

describe('archon run --model-url builtin', () => {
  it('runs a goal on the built-in engine with no model server: it ends by itself and its model calls are recorded with the engine\'s token counts', async () => {
    const dir = tempDir();
    // A small context bounds the run: a grammar keeps a random model writing until its context ends.
    const model = writeTinyModel(join(dir, 'tiny.gguf'), { contextLength: 4096 });
    const dataDir = join(dir, 'data');
    const result = await spawnArchon(['run', GOAL, '--model-url', 'builtin', '--model', model, '--data-dir', dataDir, '--workspace', tempDir(), '--approve', 'auto'], { OPENAI_API_KEY: '' }).done;
    // A tiny random model plans nonsense: the run completes or fails, but it is never a configuration error.
    expect([0, 1], result.stderr).toContain(result.status);
    expect(result.stderr).toContain("(Archon's built-in engine)");
    const { calls, options } = modelCalls(dataDir);
    // The probe's GETs carry no tokens; every chat completion does.
    const chats = calls.filter((call) => call.purpose !== 'probe' && call.status === 'completed');
    expect(chats.length).toBeGreaterThan(0);
    for (const call of chats) {
      expect(call.prompt).toBeGreaterThan(0);
      expect(call.completion).toBeGreaterThan(0);
    }
    // Recorded as the built-in engine and the model's file, so a resume starts the engine again (a sub-agent's run, when the tiny model plans one, too).
    expect(options.length).toBeGreaterThan(0);
    expect(options.every((option) => option.modelUrl === BUILTIN_MODEL_URL && option.model === model)).toBe(true);
  }, 120_000);

  it('`archon estop` from another process aborts the generation in progress: the run ends stopped and the engine counts the generation aborted', async () => {
    const dir = tempDir();
    // An endless model writes until its context ends: the stop lands while the first plan is generating.
    const model = writeTinyModel(join(dir, 'endless.gguf'), { endless: true, contextLength: 8192 });
    const dataDir = join(dir, 'data');
    const { child, done } = spawnArchon(['run', GOAL, '--model-url', 'builtin', '--model', model, '--data-dir', dataDir, '--workspace', tempDir(), '--approve', 'auto'], { OPENAI_API_KEY: '', [ENGINE_LOG_ENV]: 'verbose' });
    const lines = createInterface({ input: child.stderr as NodeJS.ReadableStream });
    // The probe's one-token request generates first; the plan's generation is the first that may run long.
    const planning = (line: string) => Number(/^archon engine: generating \(at most (\d+) tokens\)/.exec(line)?.[1] ?? 0) > 1;
    let started = false;
    const generating = new Promise<void>((resolve) =>
      lines.on('line', (line) => {
        if (!planning(line)) return;
        started = true;
        resolve();
      }),
    );
    // A run that ends before any plan is generating (the engine failed to load, say) fails here, with what it printed.
    const endedFirst = done.then((early) => {
      if (!started) expect.fail(`the run ended (exit ${early.status}) before a plan was generating:\n${early.stderr}`);
    });
    await Promise.race([generating, endedFirst]);
    expect(runArchon(['estop', '--data-dir', dataDir]).status).toBe(0);
    const result = await done;
    expect(result.status, result.stderr).toBe(3);
    expect(result.stderr).toMatch(/archon engine: generation aborted by its client after \d+ of at most \d+ tokens/);
  }, 120_000);
});
