#!/usr/bin/env node
// Builds llama.cpp's own `llama-server` from the source that the node-llama-cpp package ships, once per
// source version, and caches it under the user's cache folder. Prints the binary's path. The real-engine
// tests run against it; `.ci/run` calls this before the suite. Plain JavaScript: this runs under the
// machine's Node. Minutes to half an hour on two cores the first time; instant after.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, chmodSync } from 'node:fs';
import { availableParallelism, homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const llamaDir = join(root, 'node_modules', 'node-llama-cpp', 'llama');
const bundle = join(llamaDir, 'gitRelease.bundle');

function fail(message) {
  process.stderr.write(`build-llama-server: ${message}\n`);
  process.exit(1);
}

/** The cache folder of this source version: the bundle's own hash names it. */
function llamaServerCacheDir() {
  const cacheRoot = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  const digest = createHash('sha256').update(readFileSync(bundle)).digest('hex').slice(0, 16);
  return join(cacheRoot, 'archon', 'llama-server', digest);
}

function run(command, args, cwd) {
  const result = spawnSync(command, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0) fail(`${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal})`);
}

function works(binary) {
  return existsSync(binary) && spawnSync(binary, ['--version'], { stdio: 'ignore', timeout: 30_000 }).status === 0;
}

function build(cacheDir) {
  const work = `${cacheDir}.build-${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const source = join(work, 'src');
  run('git', ['clone', '--quiet', bundle, source], work);
  const generator = spawnSync('ninja', ['--version'], { stdio: 'ignore' }).status === 0 ? ['-G', 'Ninja'] : [];
  run('cmake', ['-S', source, '-B', join(work, 'build'), ...generator, '-DCMAKE_BUILD_TYPE=Release', '-DBUILD_SHARED_LIBS=OFF',
    '-DLLAMA_CURL=OFF', '-DLLAMA_BUILD_TESTS=OFF', '-DLLAMA_BUILD_EXAMPLES=OFF', '-DGGML_NATIVE=OFF'], work);
  run('cmake', ['--build', join(work, 'build'), '--target', 'llama-server', '--parallel', String(availableParallelism())], work);
  const built = join(work, 'build', 'bin', 'llama-server');
  if (!works(built)) fail(`the build produced no working binary at ${built}`);
  const staged = join(work, 'llama-server');
  copyFileSync(built, staged);
  chmodSync(staged, 0o755);
  mkdirSync(cacheDir, { recursive: true });
  renameSync(staged, join(cacheDir, 'llama-server'));
  rmSync(work, { recursive: true, force: true });
}

/** `--where`: print the cached binary's path and exit 0, or exit 1 when it is not built (nothing is built). */
function main() {
  if (!existsSync(bundle)) fail('node-llama-cpp is not installed: run `npm ci` first');
  const cacheDir = llamaServerCacheDir();
  const binary = join(cacheDir, 'llama-server');
  if (process.argv.includes('--where')) {
    if (!works(binary)) process.exit(1);
  } else if (!works(binary)) {
    process.stderr.write(`build-llama-server: building llama-server from node-llama-cpp's llama.cpp source into ${cacheDir} (5 to 30 minutes on 2 cores)\n`);
    build(cacheDir);
  }
  process.stdout.write(`${binary}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
