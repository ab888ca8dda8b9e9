import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnArchon, type CliResult } from '../../support/archon-process';
import { ARCHON_BIN, builtFile } from '../../support/built';
import { ggufBytes, sha256Of, startModelFileServer, type ModelFileServer } from '../../support/model-file-server';
import { canMountSmallDisk, useSmallDisk } from '../../support/small-disk';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
let server: ModelFileServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const MiB = 1024 * 1024;
/** Several cold CLI starts on a loaded machine. */
const CLI_TIMEOUT_MS = 120_000;

async function serve(size: number): Promise<ModelFileServer> {
  server = await startModelFileServer(ggufBytes(size));
  return server;
}

/** The built CLI, asynchronously: the file server lives in this process. */
function archon(...args: string[]): Promise<CliResult> {
  return spawnArchon(['models', ...args]).done;
}

function pullArgs(served: ModelFileServer, dataDir: string, sha256 = served.sha256): string[] {
  return ['pull', 'test-model', '--url', served.url, '--sha256', sha256, '--data-dir', dataDir];
}

const shellQuote = (arg: string) => `'${arg.replaceAll("'", "'\\''")}'`;

/** `archon models …` with stdout and stderr on a terminal (util-linux `script` gives it a pty): what the terminal showed. */
async function onTerminal(args: string[]): Promise<{ status: number | null; screen: string }> {
  builtFile('node/cli.js');
  const child = spawn('script', ['-qefc', [process.execPath, ARCHON_BIN, 'models', ...args].map(shellQuote).join(' '), '/dev/null'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let screen = '';
  child.stdout.on('data', (chunk: Buffer) => (screen += chunk.toString('utf8')));
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { status, screen };
}

function sizeOf(file: string): number {
  return existsSync(file) ? statSync(file).size : 0;
}

function modelFile(dataDir: string): string {
  return join(dataDir, 'models', 'test-model.gguf');
}

describe('archon models', () => {
  it('lists the catalogue, pulls a file from a URL with progress lines, lists it installed, and removes it', { timeout: CLI_TIMEOUT_MS }, async () => {
    const served = await serve(2 * MiB);
    const dataDir = tempDir();

    const before = await archon('list', '--data-dir', dataDir);
    expect(before.status, before.stderr).toBe(0);
    expect(before.stdout).toMatch(/^qwen2\.5-1\.5b\s+not installed\s+986 MB\s+catalog\s+Qwen2\.5 1\.5B Instruct \(Q4_K_M\), Apache-2\.0, needs 2\.0 GB of memory$/m);
    expect(before.stdout).toContain(`Models live in ${join(dataDir, 'models')}.`);

    const pulled = await archon(...pullArgs(served, dataDir));
    expect(pulled.status, pulled.stderr).toBe(0);
    expect(pulled.stdout).toBe(`Pulled test-model (2.1 MB), SHA-256 verified: ${modelFile(dataDir)}\n`);
    expect(pulled.stderr).toContain('test-model: 0% 0 bytes of 2.1 MB\n');
    expect(pulled.stderr).toContain('test-model: 100% 2.1 MB of 2.1 MB\n');
    expect(pulled.stderr.split('\n').length).toBeLessThanOrEqual(12);
    expect(sha256Of(readFileSync(modelFile(dataDir)))).toBe(served.sha256);

    const listed = await archon('list', '--json', '--data-dir', dataDir);
    const models = listed.stdout.trim().split('\n').map((line) => JSON.parse(line) as { name: string; installed: boolean; source: string; path: string | null });
    expect(models.find((model) => model.name === 'test-model')).toMatchObject({ installed: true, source: 'url', path: modelFile(dataDir) });
    expect(models.filter((model) => model.installed).map((model) => model.name)).toEqual(['test-model']);

    const again = await archon(...pullArgs(served, dataDir));
    expect(again.stdout).toBe(`test-model is already installed: ${modelFile(dataDir)}\n`);
    expect(served.requests).toHaveLength(1);

    const removed = await archon('rm', 'test-model', '--data-dir', dataDir);
    expect(removed.status, removed.stderr).toBe(0);
    expect(removed.stdout).toBe('Removed test-model (2.1 MB freed).\n');
    expect(existsSync(modelFile(dataDir))).toBe(false);
    const unknown = await archon('rm', 'test-model', '--data-dir', dataDir);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/^archon: There is no model test-model in the library\. `archon models list` shows the catalogue/);
  });

  it('resumes a pull whose process was killed mid-transfer, with a Range from the bytes it kept, and verifies the whole file', { timeout: CLI_TIMEOUT_MS }, async () => {
    const served = await serve(8 * MiB);
    served.answers.push({ stallAfter: 4 * MiB });
    const dataDir = tempDir();
    const part = `${modelFile(dataDir)}.part`;

    const first = spawnArchon(['models', ...pullArgs(served, dataDir)]);
    await expect.poll(() => sizeOf(part), { timeout: 60_000 }).toBe(4 * MiB);
    first.child.kill('SIGKILL');
    const killed = await first.done;
    expect(killed.status).toBeNull();
    expect(killed.stderr).toContain('test-model: 50% 4.2 MB of 8.4 MB\n');
    const kept = sizeOf(part);
    expect(kept).toBe(4 * MiB);
    expect(existsSync(`${part}.lock`), 'the killed pull left its lock, which the next one takes over').toBe(true);

    const second = await archon(...pullArgs(served, dataDir));

    expect(second.status, second.stderr).toBe(0);
    expect(served.requests.map((request) => [request.range, request.status])).toEqual([
      [undefined, 200],
      [`bytes=${kept}-`, 206],
    ]);
    expect(second.stdout).toBe(`Pulled test-model (8.4 MB, resumed after 4.2 MB), SHA-256 verified: ${modelFile(dataDir)}\n`);
    expect(second.stderr).toMatch(/^test-model: 50% 4\.2 MB of 8\.4 MB\n/);
    expect(sha256Of(readFileSync(modelFile(dataDir)))).toBe(served.sha256);
    expect(existsSync(part)).toBe(false);
    expect(existsSync(`${part}.lock`)).toBe(false);
  });

  it.skipIf(!existsSync('/usr/bin/script'))('draws a progress bar in place on a terminal', { timeout: CLI_TIMEOUT_MS }, async () => {
    const served = await serve(2 * MiB);
    const dataDir = tempDir();

    const { status, screen } = await onTerminal(pullArgs(served, dataDir));

    expect(status, screen).toBe(0);
    expect(screen).toContain(`\r\x1b[Ktest-model [${'#'.repeat(30)}] 100% 2.1 MB / 2.1 MB\r\n`);
    expect(screen).not.toContain('test-model: ');
    expect(screen).toContain('Pulled test-model (2.1 MB), SHA-256 verified');
  });

  it('keeps what was downloaded when interrupted (Ctrl-C), exit 3', { timeout: CLI_TIMEOUT_MS }, async () => {
    const served = await serve(4 * MiB);
    served.answers.push({ stallAfter: MiB });
    const dataDir = tempDir();
    const part = `${modelFile(dataDir)}.part`;

    const started = spawnArchon(['models', ...pullArgs(served, dataDir)]);
    await expect.poll(() => sizeOf(part), { timeout: 60_000 }).toBe(MiB);
    started.child.kill('SIGINT');
    const interrupted = await started.done;

    expect(interrupted.status).toBe(3);
    expect(interrupted.stderr).toContain('archon: The download of test-model was cancelled; the 1.0 MB downloaded so far are kept. Pull again to resume.\n');
    expect(sizeOf(part)).toBe(MiB);
  });

  it('refuses a file whose SHA-256 does not match, removing it: exit 1', { timeout: CLI_TIMEOUT_MS }, async () => {
    const served = await serve(MiB);
    const dataDir = tempDir();
    const wrong = 'F'.repeat(64);

    const refused = await archon(...pullArgs(served, dataDir, wrong));

    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(`archon: The download of test-model from ${new URL(served.url).host} failed: the file's SHA-256 is ${served.sha256}, not the published ${'f'.repeat(64)}, so it was removed.`);
    expect(existsSync(modelFile(dataDir))).toBe(false);
    expect(existsSync(`${modelFile(dataDir)}.part`)).toBe(false);
  });

  it('refuses --url without --sha256, and an unknown catalogue name: exit 2', { timeout: CLI_TIMEOUT_MS }, async () => {
    const dataDir = tempDir();
    const alone = await archon('pull', 'x', '--url', 'http://127.0.0.1:9/model.gguf', '--data-dir', dataDir);
    expect(alone.status).toBe(2);
    expect(alone.stderr).toBe("archon: --url and --sha256 go together: give the file's URL and its published SHA-256.\n");
    const unknown = await archon('pull', 'qwen9-1000b', '--data-dir', dataDir);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('archon: There is no model qwen9-1000b in the catalogue. `archon models list` shows the catalogue;');
  });

  it('adds a local GGUF file and lists it; rejects a file that is not GGUF: exit 2', { timeout: CLI_TIMEOUT_MS }, async () => {
    const dataDir = tempDir();
    const dir = tempDir();
    const text = join(dir, 'notes.gguf');
    writeFileSync(text, 'not a model');
    const model = join(dir, 'Mine.gguf');
    writeFileSync(model, ggufBytes(4096));

    const rejected = await archon('add', text, '--data-dir', dataDir);
    expect(rejected.status).toBe(2);
    expect(rejected.stderr).toBe(`archon: ${text} is not a GGUF model: it does not start with the bytes "GGUF". Add a .gguf file (llama.cpp's model format).\n`);

    const added = await archon('add', model, '--name', 'mine', '--data-dir', dataDir);
    expect(added.status, added.stderr).toBe(0);
    expect(added.stdout).toBe(`Added mine: ${model} (4.1 KB).\n`);
    const listed = await archon('list', '--data-dir', dataDir);
    expect(listed.stdout).toMatch(/^mine\s+installed\s+4\.1 KB\s+local\s+Mine\.gguf\n {2}.*Mine\.gguf$/m);

    const forgotten = await archon('rm', 'mine', '--data-dir', dataDir);
    expect(forgotten.stdout).toBe(`Removed mine from the library; the file ${model} is left where it is.\n`);
    expect(existsSync(model)).toBe(true);
  });

  describe.skipIf(!canMountSmallDisk())('on a small disk', () => {
    const smallDisk = useSmallDisk('1m');

    it('refuses a download the disk cannot take before writing a byte: exit 6', { timeout: CLI_TIMEOUT_MS }, async () => {
      const served = await serve(3 * MiB);
      const dataDir = join(smallDisk(), 'data');

      const refused = await archon(...pullArgs(served, dataDir));

      expect(refused.status).toBe(6);
      expect(refused.stderr).toMatch(/^archon: test-model needs 3\.1 MB more on the disk holding .*models, which has .* free\. Free some space \(or use a --data-dir on a larger disk\), then pull again\.\n$/);
      expect(existsSync(`${modelFile(dataDir)}.part`)).toBe(false);
    });
  });
});
