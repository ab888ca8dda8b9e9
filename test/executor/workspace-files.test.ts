import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { useTempDirs } from '../support/temp-dir';
import { usePools } from '../support/tools';

const tempDir = useTempDirs();
const openPool = usePools();
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

const OUTSIDE = 'OUTSIDE-SECRET-CONTENT';

/** A child process that runs `script` (a loop body over `args`) in a tight loop until killed. */
function inLoop(body: string, args: string[]): void {
  const script = `const fs = require('node:fs'); const args = process.argv.slice(1); for (let i = 0; i < 1e9; i++) { try { ${body} } catch {} }`;
  const child = spawn(process.execPath, ['-e', script, ...args], { stdio: 'ignore' });
  stops.push(async () => {
    child.kill('SIGKILL');
    if (child.exitCode === null && child.signalCode === null) await new Promise((resolve) => child.once('exit', resolve));
  });
}

/**
 * Three links that keep changing: `file-link` and `dir-link` flip their target between inside and
 * outside (a new link renamed over the old), and `swap` is in turn a real folder and a link to the
 * outside folder (so a path that was checked with no link in it has one when it is used).
 */
function flippingWorkspace() {
  const root = tempDir();
  const workspace = join(root, 'workspace');
  const outside = join(root, 'outside');
  mkdirSync(join(workspace, 'real'), { recursive: true });
  mkdirSync(join(workspace, 'swap'));
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), OUTSIDE);
  writeFileSync(join(workspace, 'real', 'secret.txt'), 'inside');
  writeFileSync(join(workspace, 'swap', 'secret.txt'), 'inside');
  symlinkSync(join(workspace, 'real'), join(workspace, 'dir-link'));
  symlinkSync(join(workspace, 'real', 'secret.txt'), join(workspace, 'file-link'));
  const flip = "const [link, a, b] = args; fs.symlinkSync(i % 2 ? a : b, link + '.next'); fs.renameSync(link + '.next', link);";
  inLoop(flip, [join(workspace, 'dir-link'), join(workspace, 'real'), outside]);
  inLoop(flip, [join(workspace, 'file-link'), join(workspace, 'real', 'secret.txt'), join(outside, 'secret.txt')]);
  const swap = "const [dir, away, target] = args; fs.renameSync(dir, away); fs.symlinkSync(target, dir); fs.unlinkSync(dir); fs.renameSync(away, dir);";
  inLoop(swap, [join(workspace, 'swap'), join(workspace, '.swap-away'), outside]);
  return { workspace, outside };
}

const PATHS = ['dir-link/secret.txt', 'file-link', 'swap/secret.txt'];

describe('file tools against a symbolic link flipping between inside and outside the workspace', () => {
  it('500 read_file calls: none returns the outside file', async () => {
    const { workspace } = flippingWorkspace();
    const pool = openPool(workspace);
    const statuses: Record<string, number> = {};
    for (let index = 0; index < 500; index++) {
      const path = PATHS[index % PATHS.length] as string;
      const result = await pool.call('read_file', { path }, { signal: new AbortController().signal, timeoutMs: 10_000 });
      expect(result.content).not.toContain(OUTSIDE);
      statuses[result.status] = (statuses[result.status] ?? 0) + 1;
    }
    expect(statuses.denied).toBeGreaterThan(0);
  }, 120_000);

  it('500 write_file calls: nothing is written outside, and the outside file is unchanged', async () => {
    const { workspace, outside } = flippingWorkspace();
    const pool = openPool(workspace);
    const statuses: Record<string, number> = {};
    for (let index = 0; index < 500; index++) {
      const path = [`dir-link/new-${index}.txt`, 'file-link', `swap/new-${index}.txt`, `swap/sub/new-${index}.txt`][index % 4] as string;
      const result = await pool.call('write_file', { path, content: `written ${index}` }, { signal: new AbortController().signal, timeoutMs: 10_000 });
      statuses[result.status] = (statuses[result.status] ?? 0) + 1;
    }
    expect(readdirSync(outside)).toEqual(['secret.txt']);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe(OUTSIDE);
    expect(statuses.denied).toBeGreaterThan(0);
    expect(statuses.success).toBeGreaterThan(0);
  }, 120_000);

  it('200 search_files calls: none finds the outside file', async () => {
    const { workspace } = flippingWorkspace();
    const pool = openPool(workspace);
    for (let index = 0; index < 200; index++) {
      const result = await pool.call('search_files', { query: OUTSIDE }, { signal: new AbortController().signal, timeoutMs: 10_000 });
      expect(result.content).not.toContain(`: ${OUTSIDE}`);
    }
  }, 120_000);
});
