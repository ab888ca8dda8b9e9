import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';

function mount(size: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'archon-small-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir], { stdio: 'pipe' });
    return dir;
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** Lazily: a log the test opened keeps its file open until the process ends. */
function unmount(dir: string): void {
  execFileSync('umount', ['--lazy', dir], { stdio: 'pipe' });
  rmSync(dir, { recursive: true, force: true });
}

/** Whether this process may mount a tmpfs (root, or CAP_SYS_ADMIN): the tests that fill a real disk need it. */
export function canMountSmallDisk(): boolean {
  try {
    unmount(mount('64k'));
    return true;
  } catch {
    return false;
  }
}

/** A tmpfs of `size` (mount's syntax: 64m) mounted for the test file, unmounted after it; the getter gives its folder. */
export function useSmallDisk(size: string): () => string {
  let dir: string | null = null;
  beforeAll(() => {
    dir = mount(size);
  });
  afterAll(() => {
    if (dir !== null) unmount(dir);
  });
  return () => {
    if (dir === null) throw new Error('The small disk is mounted in beforeAll.');
    return dir;
  };
}

function writeUntilFull(fd: number, bytes: Buffer): void {
  for (let writes = 0; writes < 1 << 16; writes++) {
    try {
      writeSync(fd, bytes);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOSPC') return;
      throw error;
    }
  }
  throw new Error(`The disk took ${1 << 16} writes of ${bytes.length} bytes without filling: it is not a small disk.`);
}

/** Fills the disk holding `dir` with a file there, to the last byte it takes; returns the file, whose removal frees the space. */
export function fillDisk(dir: string): string {
  const filler = join(dir, `filler-${process.pid}-${Date.now()}`);
  const fd = openSync(filler, 'a');
  try {
    for (let size = 1 << 20; size >= 1; size = Math.floor(size / 16)) writeUntilFull(fd, Buffer.alloc(size));
  } finally {
    closeSync(fd);
  }
  return filler;
}
