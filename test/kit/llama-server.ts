import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

/**
 * llama.cpp's own `llama-server`, built from the source node-llama-cpp ships by
 * scripts/build-llama-server.mjs (which `.ci/run` runs), started on a model for tests and benchmarks.
 */

const BUILD_SCRIPT = fileURLToPath(new URL('../../scripts/build-llama-server.mjs', import.meta.url));

/** The cached build's path, or null when it is not built (nothing is built here). */
export function findLlamaServer(): string | null {
  const found = spawnSync(process.execPath, [BUILD_SCRIPT, '--where'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : null;
}

export interface LlamaServerOptions {
  model: string;
  /** `--jinja` (native tool calls through the model's template) or `--no-jinja`. */
  jinja: boolean;
  contextSize?: number;
}

export interface LlamaServerProcess {
  /** The server's root, e.g. http://127.0.0.1:PORT (its OpenAI-compatible API is under /v1). */
  url: string;
  output: () => string;
  close: () => Promise<void>;
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** Waits (bounded) for /health to answer 200; fails at once when the server exits. */
async function healthy(url: string, child: ChildProcess, output: () => string): Promise<void> {
  for (let tries = 0; tries < 600; tries++) {
    if (child.exitCode !== null) throw new Error(`llama-server exited with ${child.exitCode}:\n${output()}`);
    const status = await fetch(`${url}/health`).then((response) => response.status, () => 0);
    if (status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`llama-server did not become healthy:\n${output()}`);
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** Starts llama-server on one thread and one slot; resolves once it answers /health. */
export async function startLlamaServer(binary: string, { model, jinja, contextSize = 16_384 }: LlamaServerOptions): Promise<LlamaServerProcess> {
  const port = await freePort();
  const args = ['-m', model, '--host', '127.0.0.1', '--port', String(port), '--threads', '1', '--threads-batch', '1', '--parallel', '1', '-c', String(contextSize), jinja ? '--jinja' : '--no-jinja'];
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
  const url = `http://127.0.0.1:${port}`;
  try {
    await healthy(url, child, () => log);
  } catch (error) {
    await stop(child);
    throw error;
  }
  return { url, output: () => log, close: () => stop(child) };
}
