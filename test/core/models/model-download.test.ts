import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { downloadModel, partFileOf, partSourceOf, type DownloadTarget } from '../../../src/core/models/model-download';
import type { DownloadProgress } from '../../../src/shared/schemas/models';
import { ggufBytes, sha256Of, startModelFileServer, type ModelFileServer } from '../../support/model-file-server';
import { canMountSmallDisk, useSmallDisk } from '../../support/small-disk';
import { useTempDirs } from '../../support/temp-dir';
import { rejectionOf } from '../../support/archon-errors';

const tempDir = useTempDirs();
let server: ModelFileServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const SIZE = 3 * 1024 * 1024 + 123;

async function serve(size = SIZE): Promise<ModelFileServer> {
  server = await startModelFileServer(ggufBytes(size));
  return server;
}

function targetOf(served: ModelFileServer, dir: string, extra: Partial<DownloadTarget> = {}): DownloadTarget {
  return { name: 'tiny', url: served.url, sha256: served.sha256, file: join(dir, 'tiny.gguf'), ...extra };
}


describe('downloadModel', () => {
  it('downloads the whole file, reporting progress as it goes, verifies it and renames it into place', async () => {
    const served = await serve();
    const dir = tempDir();
    const progress: DownloadProgress[] = [];

    const result = await downloadModel(targetOf(served, dir), { onProgress: (update) => progress.push(update) });

    expect(result).toEqual({ file: join(dir, 'tiny.gguf'), bytes: SIZE, resumedFromBytes: 0 });
    expect(readFileSync(result.file).equals(served.file)).toBe(true);
    expect(existsSync(partFileOf(result.file))).toBe(false);
    expect(progress.length).toBeGreaterThan(2);
    expect(progress.every((update) => update.totalBytes === SIZE)).toBe(true);
    expect(progress.map((update) => update.doneBytes)).toEqual([...progress.map((update) => update.doneBytes)].sort((a, b) => a - b));
    expect(progress.at(-1)?.doneBytes).toBe(SIZE);
    expect(served.requests).toEqual([{ path: '/model.gguf', range: undefined, status: 200 }]);
  });

  it('keeps what came before the connection closed half-way, and resumes from there with a Range request', async () => {
    const served = await serve();
    const dir = tempDir();
    const target = targetOf(served, dir);
    served.answers.push({ cutAfter: Math.floor(SIZE / 2) });

    const broken = await rejectionOf(downloadModel(target));
    expect(broken.code).toBe('DOWNLOAD_FAILED');
    expect(broken.message).toMatch(/Pull again: it resumes from there\./);
    const kept = statSync(partFileOf(target.file)).size;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThanOrEqual(Math.floor(SIZE / 2));
    expect(existsSync(target.file)).toBe(false);

    const progress: DownloadProgress[] = [];
    const result = await downloadModel(target, { onProgress: (update) => progress.push(update) });

    expect(served.requests.map((request) => [request.range, request.status])).toEqual([
      [undefined, 200],
      [`bytes=${kept}-`, 206],
    ]);
    expect(result.resumedFromBytes).toBe(kept);
    expect(progress[0]).toEqual({ doneBytes: kept, totalBytes: SIZE });
    expect(sha256Of(readFileSync(target.file))).toBe(served.sha256);
    expect(existsSync(partFileOf(target.file))).toBe(false);
  });

  it('does not resume a part a pull of another URL or checksum left: it starts over', async () => {
    const served = await serve();
    const dir = tempDir();
    const target = targetOf(served, dir);
    served.answers.push({ cutAfter: Math.floor(SIZE / 2) });
    await rejectionOf(downloadModel({ ...target, sha256: 'f'.repeat(64) }));
    expect(statSync(partFileOf(target.file)).size).toBeGreaterThan(0);

    const result = await downloadModel(target);

    expect(served.requests.at(-1)?.range).toBeUndefined();
    expect(result.resumedFromBytes).toBe(0);
    expect(readFileSync(target.file).equals(served.file)).toBe(true);
    expect(existsSync(partSourceOf(partFileOf(target.file)))).toBe(false);
  });

  it('starts over cleanly when the server ignores the Range', async () => {
    const served = await serve();
    const dir = tempDir();
    const target = targetOf(served, dir);
    writeFileSync(partFileOf(target.file), served.file.subarray(0, 1000));
    served.answers.push({ ignoreRange: true });

    const result = await downloadModel(target);

    expect(served.requests.map((request) => [request.range, request.status])).toEqual([['bytes=1000-', 200]]);
    expect(result.resumedFromBytes).toBe(0);
    expect(readFileSync(target.file).equals(served.file)).toBe(true);
  });

  it('asks for the whole file again when the kept part is longer than the file (416)', async () => {
    const served = await serve(4096);
    const dir = tempDir();
    const target = targetOf(served, dir);
    writeFileSync(partFileOf(target.file), Buffer.alloc(5000));

    await downloadModel(target);

    expect(served.requests.map((request) => [request.range, request.status])).toEqual([
      ['bytes=5000-', 416],
      [undefined, 200],
    ]);
    expect(readFileSync(target.file).equals(served.file)).toBe(true);
  });

  it('verifies a kept part that is already the whole file without downloading it again', async () => {
    const served = await serve(4096);
    const dir = tempDir();
    const target = targetOf(served, dir);
    writeFileSync(partFileOf(target.file), served.file);

    const result = await downloadModel(target);

    expect(served.requests.map((request) => [request.range, request.status])).toEqual([['bytes=4096-', 416]]);
    expect(result).toEqual({ file: target.file, bytes: 4096, resumedFromBytes: 4096 });
    expect(readFileSync(target.file).equals(served.file)).toBe(true);
  });

  it('refuses a file whose SHA-256 differs from the published one, and removes it', async () => {
    const served = await serve();
    const dir = tempDir();
    const target = targetOf(served, dir, { sha256: 'ab'.repeat(32) });

    const error = await rejectionOf(downloadModel(target));

    expect(error.code).toBe('DOWNLOAD_FAILED');
    expect(error.message).toContain(`the file's SHA-256 is ${served.sha256}, not the published ${'ab'.repeat(32)}, so it was removed. Pull again`);
    expect(existsSync(target.file)).toBe(false);
    expect(existsSync(partFileOf(target.file))).toBe(false);
  });

  it('refuses a file that is not GGUF even when its checksum matches', async () => {
    const html = Buffer.from('<html>not a model</html>');
    server = await startModelFileServer(html);
    const dir = tempDir();
    const target = targetOf(server, dir);

    const error = await rejectionOf(downloadModel(target));

    expect(error.code).toBe('DOWNLOAD_FAILED');
    expect(error.message).toContain('the file is not a GGUF model, so it was removed');
    expect(existsSync(partFileOf(target.file))).toBe(false);
  });

  it('says what the server answered when it is not the file', async () => {
    const served = await serve();
    const error = await rejectionOf(downloadModel({ ...targetOf(served, tempDir()), url: served.url.replace('model.gguf', 'missing.gguf') }));
    expect(error.code).toBe('DOWNLOAD_FAILED');
    expect(error.message).toMatch(/^The download of tiny from 127\.0\.0\.1:\d+ failed: the server answered 404 Not Found\. Check the URL, then pull again\.$/);
  });

  it('says to check the network when the server cannot be reached', async () => {
    const gone = await serve();
    await gone.close();
    server = undefined;
    const error = await rejectionOf(downloadModel(targetOf(gone, tempDir())));
    expect(error.code).toBe('DOWNLOAD_FAILED');
    expect(error.message).toMatch(/^The download of tiny from 127\.0\.0\.1:\d+ failed: .*ECONNREFUSED.*\. Check the network \(and the URL\), then pull again\.$/);
  });

  it('is cancelled by its signal mid-transfer, keeping what arrived for a resume', async () => {
    const served = await serve();
    const dir = tempDir();
    const target = targetOf(served, dir);
    served.answers.push({ stallAfter: 1024 * 1024 });
    const controller = new AbortController();

    const error = await rejectionOf(
      downloadModel(target, {
        signal: controller.signal,
        onProgress: (update) => {
          if (update.doneBytes >= 1024 * 1024) controller.abort();
        },
      }),
    );

    expect(error.code).toBe('CANCELLED');
    expect(error.message).toMatch(/^The download of tiny was cancelled; the 1\.0 MB downloaded so far are kept\. Pull again to resume\.$/);
    expect(statSync(partFileOf(target.file)).size).toBe(1024 * 1024);
  });

  it('refuses a second pull of the same model while the first goes on, and takes over a lock its dead holder left', async () => {
    const served = await serve();
    const dir = tempDir();
    const target = targetOf(served, dir);
    served.answers.push({ stallAfter: 1024 });
    const controller = new AbortController();
    const first = downloadModel(target, { signal: controller.signal, onProgress: (update) => update.doneBytes >= 1024 && controller.abort() });

    await expect.poll(() => existsSync(`${partFileOf(target.file)}.lock`)).toBe(true);
    const second = await rejectionOf(downloadModel(target));
    expect(second.code).toBe('VALIDATION_FAILED');
    expect(second.message).toBe(`tiny is being pulled by another process (PID ${process.pid}). Wait for it to finish, or stop it, then try again.`);
    expect((await rejectionOf(first)).code).toBe('CANCELLED');
    expect(existsSync(`${partFileOf(target.file)}.lock`)).toBe(false);

    writeFileSync(`${partFileOf(target.file)}.lock`, JSON.stringify({ pid: 2 ** 22 + 1, startTicks: null }));
    await downloadModel(target);
    expect(readFileSync(target.file).equals(served.file)).toBe(true);
    expect(existsSync(`${partFileOf(target.file)}.lock`)).toBe(false);
  });

  it('refuses a model this machine has too little memory for, before any request', async () => {
    const served = await serve();
    const error = await rejectionOf(downloadModel(targetOf(served, tempDir(), { memoryBytes: totalmem() * 2 })));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toMatch(/^tiny needs about .* of memory to run; this machine has .*\. Choose a smaller model \(`archon models list`\)\.$/);
    expect(served.requests).toEqual([]);
  });

  describe.skipIf(!canMountSmallDisk())('on a small disk', () => {
    const smallDisk = useSmallDisk('1m');

    it('refuses before any request when the expected size does not fit', async () => {
      const served = await serve();
      const error = await rejectionOf(downloadModel(targetOf(served, smallDisk(), { sizeBytes: SIZE })));
      expect(error.code).toBe('DISK_FULL');
      expect(error.message).toMatch(/^tiny needs 3\.1 MB more on the disk holding .*, which has .* free\. Free some space \(or use a --data-dir on a larger disk\), then pull again\.$/);
      expect(served.requests).toEqual([]);
    });

    it("refuses before writing a byte when the server's length does not fit", async () => {
      const served = await serve();
      const target = targetOf(served, smallDisk());
      const error = await rejectionOf(downloadModel(target));
      expect(error.code).toBe('DISK_FULL');
      expect(existsSync(partFileOf(target.file))).toBe(false);
    });
  });
});
