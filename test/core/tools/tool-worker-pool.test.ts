import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { getEventListeners } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { processesMatching, uniqueSleepSeconds } from '../../support/processes';
import { useTempDirs } from '../../support/temp-dir';
import { usePools } from '../../support/tools';
import { SHARED_CALLS_PER_WORKER } from '../../../src/core/tools/tool-worker-pool';

const tempDir = useTempDirs();
const openPool = usePools();
const signal = () => new AbortController().signal;
const call = (pool: ReturnType<typeof openPool>, tool: string, args: unknown, timeoutMs = 5000) => pool.call(tool, args, { signal: signal(), timeoutMs });

function workspaceWithOutside() {
  const root = tempDir();
  const workspace = join(root, 'workspace');
  const outside = join(root, 'outside');
  mkdirSync(workspace);
  mkdirSync(outside);
  return { root, workspace, outside };
}

describe('tool worker pool: confinement to the workspace', () => {
  it('denies write_file to ../x, to an absolute path outside, and through a symlink pointing outside; nothing is written outside', async () => {
    const { root, workspace, outside } = workspaceWithOutside();
    symlinkSync(outside, join(workspace, 'escape'));
    const pool = openPool(workspace);
    for (const path of ['../x', join(outside, 'abs.txt'), 'escape/through-link.txt', 'escape/deeper/new.txt', '/etc/archon-test']) {
      const result = await call(pool, 'write_file', { path, content: 'pwned' });
      expect(result.status, path).toBe('denied');
      expect(result.content).toMatch(/outside the workspace/);
    }
    expect(readdirSync(outside)).toEqual([]);
    expect(existsSync(join(root, 'x'))).toBe(false);
    expect(readdirSync(workspace)).toEqual(['escape']);
  });

  it("keeps the hidden folders (Archon's data, the auditor's keys) from the file tools even inside the workspace, a link to them included", async () => {
    const { workspace } = workspaceWithOutside();
    const keys = join(workspace, '.config', 'archon-audit-keys');
    mkdirSync(keys, { recursive: true });
    writeFileSync(join(keys, 'run.key'), 'the auditor key');
    symlinkSync(keys, join(workspace, 'shortcut'));
    const pool = openPool(workspace, { confinement: { mode: 'on', allowNetwork: false, hidden: [keys] } });
    for (const [tool, args] of [
      ['read_file', { path: '.config/archon-audit-keys/run.key' }],
      ['read_file', { path: 'shortcut/run.key' }],
      ['list_files', { path: '.config/archon-audit-keys' }],
      ['write_file', { path: 'shortcut/forged.key', content: 'forged' }],
    ] as const) {
      const result = await call(pool, tool, args);
      expect(result.status, `${tool} ${JSON.stringify(args)}`).toBe('denied');
      expect(result.content).toMatch(/keeps from every tool/);
    }
    expect(await call(pool, 'search_files', { query: 'auditor key' })).toMatchObject({ status: 'success', content: 'No match for "auditor key".' });
    expect(readdirSync(keys)).toEqual(['run.key']);
    expect(await call(pool, 'write_file', { path: 'notes.txt', content: 'fine' })).toMatchObject({ status: 'success' });
  });

  it('denies reading or listing outside the workspace, also through a symlinked file', async () => {
    const { workspace, outside } = workspaceWithOutside();
    writeFileSync(join(outside, 'secret.txt'), 'top secret');
    symlinkSync(join(outside, 'secret.txt'), join(workspace, 'innocent.txt'));
    const pool = openPool(workspace);
    expect(await call(pool, 'read_file', { path: 'innocent.txt' })).toMatchObject({ status: 'denied' });
    expect(await call(pool, 'read_file', { path: '../outside/secret.txt' })).toMatchObject({ status: 'denied' });
    expect(await call(pool, 'list_files', { path: '..' })).toMatchObject({ status: 'denied' });
    expect(await call(pool, 'search_files', { query: 'secret', path: '../outside' })).toMatchObject({ status: 'denied' });
  });

  it("applies Node's permission model to the worker: outside the workspace and temp dir it can neither read nor write", async () => {
    const { workspace, outside } = workspaceWithOutside();
    writeFileSync(join(outside, 'secret.txt'), 'x');
    const probe = new URL('../../fixtures/permission-probe-executor.mjs', import.meta.url).pathname;
    const pool = openPool(workspace, { entry: probe, readableRoots: [probe] });
    const outsideReport = JSON.parse((await call(pool, 'read_file', { readPath: join(outside, 'secret.txt'), writePath: join(outside, 'w.txt') })).content);
    expect(outsideReport).toEqual({ read: 'ERR_ACCESS_DENIED', write: 'ERR_ACCESS_DENIED', permission: true });
    writeFileSync(join(workspace, 'mine.txt'), 'x');
    const insideReport = JSON.parse((await call(pool, 'read_file', { readPath: join(workspace, 'mine.txt'), writePath: join(workspace, 'w.txt') })).content);
    expect(insideReport).toMatchObject({ read: 'allowed', write: 'allowed' });
    expect(existsSync(join(outside, 'w.txt'))).toBe(false);
  });
});

describe('tool worker pool: the built-in tools', () => {
  it('writes atomically, creates folders, and keeps the previous content so the write can be undone', async () => {
    const workspace = tempDir();
    const pool = openPool(workspace);
    expect(await call(pool, 'write_file', { path: 'notes/a/b.txt', content: 'first' })).toMatchObject({ status: 'success', metadata: { previous: { existed: false } } });
    const second = await call(pool, 'write_file', { path: 'notes/a/b.txt', content: 'second' });
    expect(second.metadata.previous).toEqual({ existed: true, content: 'first' });
    expect(readFileSync(join(workspace, 'notes/a/b.txt'), 'utf8')).toBe('second');
    expect(readdirSync(join(workspace, 'notes/a'))).toEqual(['b.txt']);
  });

  it('reads text, describes binary files instead of reading them, and caps what it reads', async () => {
    const workspace = tempDir();
    writeFileSync(join(workspace, 'a.txt'), 'hello\nworld');
    writeFileSync(join(workspace, 'image.bin'), Buffer.from([0x89, 0x50, 0x00, 0x01, 0x02]));
    writeFileSync(join(workspace, 'big.txt'), 'y'.repeat(1024 * 1024 + 10));
    const pool = openPool(workspace);
    expect(await call(pool, 'read_file', { path: 'a.txt' })).toMatchObject({ status: 'success', content: 'hello\nworld' });
    expect(await call(pool, 'read_file', { path: 'image.bin' })).toMatchObject({ status: 'error', content: expect.stringContaining('binary file (5 bytes)') });
    expect((await call(pool, 'read_file', { path: 'big.txt' })).content).toMatch(/\[truncated: the file has 1048586 bytes/);
    expect(await call(pool, 'read_file', { path: 'missing.txt' })).toMatchObject({ status: 'error', content: expect.stringContaining('no such file') });
  });

  it('lists files and searches text', async () => {
    const workspace = tempDir();
    mkdirSync(join(workspace, 'src'));
    writeFileSync(join(workspace, 'src', 'main.ts'), 'const answer = 42;\n// and the answer again\n');
    const pool = openPool(workspace);
    expect(await call(pool, 'list_files', {})).toMatchObject({ status: 'success', content: 'src/' });
    expect((await call(pool, 'search_files', { query: 'answer' })).content).toBe('src/main.ts:1: const answer = 42;\nsrc/main.ts:2: // and the answer again');
  });

  it('runs a command in the workspace with a minimal environment and reports its exit code', async () => {
    const workspace = tempDir();
    process.env.ARCHON_TEST_SECRET = 'hunter2';
    try {
      const pool = openPool(workspace);
      const ok = await call(pool, 'run_command', { command: 'pwd; env' });
      expect(ok.status).toBe('success');
      expect(ok.content).toContain(`exit code 0\n${join(workspace)}`);
      expect(ok.content).not.toContain('hunter2');
      expect(ok.content).not.toContain('OPENAI');
      expect(await call(pool, 'run_command', { command: 'echo oops >&2; exit 3' })).toMatchObject({ status: 'error', content: 'exit code 3\noops', metadata: { exitCode: 3 } });
    } finally {
      delete process.env.ARCHON_TEST_SECRET;
    }
  });

  it('caps command output', async () => {
    const pool = openPool(tempDir());
    const result = await call(pool, 'run_command', { command: 'head -c 200000 /dev/zero | tr "\\0" a' });
    expect(result.content.length).toBeLessThan(70_000);
    expect(result.content).toMatch(/\[output truncated: \d+ more bytes\]/);
  });

  it('refuses http_get while network tools are off, and fetches when they are on', async () => {
    const server = createServer((_request, response) => response.end('hello from loopback'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      expect(await call(openPool(tempDir()), 'http_get', { url })).toMatchObject({ status: 'denied', content: expect.stringContaining('Network tools are turned off') });
      expect(await call(openPool(tempDir(), { networkTools: true }), 'http_get', { url })).toMatchObject({ status: 'success', content: 'HTTP 200\nhello from loopback' });
    } finally {
      server.close();
    }
  });
});

describe('tool worker pool: limits, crashes and stops', () => {
  it('kills `sleep 95` at its 1 s timeout, grandchild included', async () => {
    const seconds = uniqueSleepSeconds();
    const pool = openPool(tempDir());
    const result = await call(pool, 'run_command', { command: `(sleep ${seconds} &) ; sleep ${seconds}` }, 1000);
    expect(result.status).toBe('timeout');
    expect(processesMatching(`sleep ${seconds}`)).toEqual([]);
  });

  it('answers error when the worker dies mid-call, replaces it, and the next call works', async () => {
    // Unconfined, so the command can see (and kill) its worker: inside the sandbox it cannot.
    const pool = openPool(tempDir(), { confinement: { mode: 'off', allowNetwork: false, hidden: [] } });
    const crashed = await call(pool, 'run_command', { command: 'kill -9 $PPID; sleep 5' });
    expect(crashed).toMatchObject({ status: 'error', content: expect.stringContaining('tool process stopped before the call finished') });
    expect(await call(pool, 'run_command', { command: 'echo alive' })).toMatchObject({ status: 'success', content: 'exit code 0\nalive' });
  });

  it('answers error when a worker exceeds its memory cap, and the next call works', async () => {
    const pool = openPool(tempDir(), { memoryMb: 16 });
    const result = await call(pool, 'write_file', { path: 'huge.txt', content: 'z'.repeat(9 * 1024 * 1024) }, 20_000);
    expect(result).toMatchObject({ status: 'error', content: expect.stringMatching(/stopped before the call finished.*ran out of memory/) });
    expect(await call(pool, 'calculator', { expression: '2+2' })).toMatchObject({ status: 'success', content: '4' });
  });

  it('stops three long commands at once, leaving zero descendant processes once the stop resolves', async () => {
    const seconds = uniqueSleepSeconds();
    const pool = openPool(tempDir());
    const calls = [1, 2, 3].map(() => call(pool, 'run_command', { command: `(sleep ${seconds} &) ; sleep ${seconds}` }, 60_000));
    await expect.poll(() => processesMatching(`sleep ${seconds}`).filter((line) => !line.includes('/bin/sh')).length, { timeout: 5000 }).toBe(6);
    await pool.stopAll();
    const results = await Promise.all(calls);
    expect(results.map((result) => result.status)).toEqual(['cancelled', 'cancelled', 'cancelled']);
    expect(processesMatching(`sleep ${seconds}`)).toEqual([]);
  });

  it('stopAll and a timeout resolve only once setsid, nohup and double-forked processes have all exited', async () => {
    const seconds = uniqueSleepSeconds();
    const pool = openPool(tempDir());
    const escapes = `setsid sleep ${seconds} & nohup sleep ${seconds} >/dev/null 2>&1 & (sleep ${seconds} &); (setsid sh -c 'sleep ${seconds} &' &)`;
    const sleepers = () => processesMatching(`sleep ${seconds}`).filter((line) => !line.includes('/bin/sh')).length;
    const stopped = call(pool, 'run_command', { command: `${escapes}; sleep ${seconds}` }, 60_000);
    await expect.poll(sleepers, { timeout: 10_000 }).toBe(5);
    await pool.stopAll();
    expect(processesMatching(`sleep ${seconds}`)).toEqual([]);
    expect(await stopped).toMatchObject({ status: 'cancelled' });

    expect(await call(pool, 'run_command', { command: `${escapes}; sleep ${seconds}` }, 3000)).toMatchObject({ status: 'timeout' });
    expect(processesMatching(`sleep ${seconds}`)).toEqual([]);
  });

  it('reuses warm workers', async () => {
    const pool = openPool(tempDir());
    pool.warmUp();
    await call(pool, 'calculator', { expression: '1' });
    const workers = () => execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' }).split('\n').filter((line) => line.includes('executor')).map((line) => line.trim().split(/\s+/)[0]);
    const before = workers();
    const results = [];
    for (let index = 0; index < 20; index++) results.push(await call(pool, 'calculator', { expression: `${index}+1` }));
    expect(results.map((result) => result.content)).toEqual(Array.from({ length: 20 }, (_, index) => String(index + 1)));
    expect(workers()).toEqual(before);
  });
});

describe('tool worker pool: warming', () => {
  const executors = () => execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' }).split('\n').filter((line) => line.includes('executor'));

  it('grows to a wider level, never shrinks for a narrower one, and stays within its maximum', async () => {
    const pool = openPool(tempDir(), { warm: 0, maxWorkers: 12 });
    const run = new AbortController();
    pool.warmTo(4, run.signal);
    expect(pool.stats().plain).toBe(4);
    pool.warmTo(10, run.signal);
    pool.warmTo(3, run.signal);
    expect(pool.stats().plain).toBe(10);
    pool.warmTo(40, run.signal);
    expect(pool.stats().plain).toBe(12);
    await expect.poll(() => pool.stats().ready, { timeout: 60_000 }).toBe(12);
    expect(executors()).toHaveLength(12);
    const results = await Promise.all(Array.from({ length: 12 }, (_, index) => call(pool, 'calculator', { expression: `${index}+1` })));
    expect(results.map((result) => result.content)).toEqual(Array.from({ length: 12 }, (_, index) => String(index + 1)));
    expect(pool.stats().plain).toBe(12);
  });

  it("leaves nothing on the run's signal once closed: a signal that outlives the run (the estop's) does not keep the pool", async () => {
    const pool = openPool(tempDir(), { warm: 0 });
    const run = new AbortController();
    pool.warmTo(2, run.signal);
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(1);
    await pool.close();
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(0);
  });

  it("stops warming and lets the warm workers go when the run's signal aborts; later warming is refused", async () => {
    const pool = openPool(tempDir(), { warm: 0 });
    const run = new AbortController();
    pool.warmTo(6, run.signal);
    expect(executors().length).toBeGreaterThanOrEqual(6);
    run.abort();
    await expect.poll(() => pool.stats().plain + executors().length, { timeout: 30_000 }).toBe(0);
    pool.warmTo(6, new AbortController().signal);
    expect(pool.stats().plain).toBe(0);
  });
});

describe('tool worker pool: read-only calls share workers', () => {
  const read = (pool: ReturnType<typeof openPool>, tool: string, args: unknown, timeoutMs = 5000) => pool.call(tool, args, { signal: signal(), timeoutMs, readOnly: true });

  it('serves 24 read-only calls at once on 3 workers, 8 to a worker, while a write still takes a worker of its own', async () => {
    const workspace = tempDir();
    const pool = openPool(workspace, { warm: 0, maxWorkers: 12 });
    const reads = Array.from({ length: 3 * SHARED_CALLS_PER_WORKER }, (_, index) => read(pool, 'calculator', { expression: `${index}*2` }));
    expect(pool.stats().plain).toBe(3);
    const write = call(pool, 'write_file', { path: 'note.txt', content: 'own worker' });
    expect(pool.stats().plain).toBe(4);
    const results = await Promise.all(reads);
    expect(results.map((result) => result.content)).toEqual(Array.from({ length: 24 }, (_, index) => String(index * 2)));
    expect(await write).toMatchObject({ status: 'success' });
    expect(readFileSync(join(workspace, 'note.txt'), 'utf8')).toBe('own worker');
    expect(pool.stats().plain).toBe(4);
  });

  it("runs a read-only call once more when another call's timeout killed the worker they shared", async () => {
    const workspace = tempDir();
    for (const name of ['stuck.pipe', 'late.pipe']) execFileSync('mkfifo', [join(workspace, name)]);
    const pool = openPool(workspace, { warm: 0 });
    // Opening a FIFO waits for a writer: the first read hangs until its timeout kills the worker both reads share.
    const stuck = read(pool, 'read_file', { path: 'stuck.pipe' }, 1000);
    const late = read(pool, 'read_file', { path: 'late.pipe' }, 60_000);
    expect(pool.stats().plain).toBe(1);
    expect(await stuck).toMatchObject({ status: 'timeout' });
    // The second read, tried again on a new worker, gets its writer now and finishes there.
    await writeFile(join(workspace, 'late.pipe'), 'hello').catch(() => undefined);
    expect(await late).toMatchObject({ status: 'error', content: expect.stringContaining('is not a file') });
  }, 60_000);
});
