import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { partFileOf } from '../../../src/core/models/model-download';
import { ModelDownloads } from '../../../src/core/models/model-downloads';
import { ModelLibrary } from '../../../src/core/models/model-library';
import type { ModelEntry } from '../../../src/shared/ipc/contract';
import { ggufBytes, startModelFileServer, type ModelFileServer } from '../../support/model-file-server';
import { useTempDirs } from '../../support/temp-dir';
import { thrownBy } from '../../support/archon-errors';

const tempDir = useTempDirs();
const SIZE = 256 * 1024;
const STALL = 64 * 1024;
let server: ModelFileServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Downloads of a library of two small models served on loopback; the first answers stall after STALL bytes until told otherwise. */
async function downloadsOf(stalls: number): Promise<{ downloads: ModelDownloads; library: ModelLibrary }> {
  server = await startModelFileServer(ggufBytes(SIZE));
  server.answers.push(...Array.from({ length: stalls }, () => ({ stallAfter: STALL })));
  const model = (name: string) => ({ name, title: name, licence: 'MIT', url: server?.url ?? '', sizeBytes: SIZE, sha256: server?.sha256 ?? '', memoryBytes: 1024 });
  const library = new ModelLibrary(tempDir(), [model('tiny-1b'), model('tiny-2b')]);
  return { downloads: new ModelDownloads(library, 1), library };
}

const entry = (downloads: ModelDownloads, name: string): ModelEntry | undefined => downloads.list().find((model) => model.name === name);

async function until(check: () => boolean): Promise<void> {
  await expect.poll(check, { timeout: 10_000, interval: 20 }).toBe(true);
}


describe('ModelDownloads', () => {
  it('downloads in the background, showing progress in the list, and lists the model installed at the end', async () => {
    const { downloads } = await downloadsOf(0);
    expect(entry(downloads, 'tiny-1b')).toMatchObject({ installed: false, download: null, lastError: null });
    downloads.pull('tiny-1b');
    expect(entry(downloads, 'tiny-1b')?.download).toEqual({ doneBytes: 0, totalBytes: null });
    // The file is in place a moment before the download has let go of it: wait for the download's end.
    await until(() => !downloads.isDownloading('tiny-1b'));
    expect(entry(downloads, 'tiny-1b')).toMatchObject({ installed: true, download: null, lastError: null });
    expect(thrownBy(() => downloads.pull('tiny-1b'))).toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringContaining('already installed') });
  });

  it('refuses a second pull of a model while one runs, and one past the limit; cancel keeps the part and records no error', async () => {
    const { downloads, library } = await downloadsOf(1);
    downloads.pull('tiny-1b');
    await until(() => entry(downloads, 'tiny-1b')?.download?.doneBytes === STALL);
    expect(entry(downloads, 'tiny-1b')?.download).toEqual({ doneBytes: STALL, totalBytes: SIZE });
    expect(thrownBy(() => downloads.pull('tiny-1b'))).toMatchObject({ code: 'VALIDATION_FAILED', message: 'tiny-1b is already downloading: wait for it to finish, or cancel it first.' });
    expect(thrownBy(() => downloads.pull('tiny-2b'))).toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringContaining('1 downloads are running already') });

    downloads.cancel('tiny-1b');
    await until(() => !downloads.isDownloading('tiny-1b'));
    expect(entry(downloads, 'tiny-1b')).toMatchObject({ installed: false, download: null, lastError: null, partialBytes: STALL });
    expect(existsSync(partFileOf(join(library.dir, 'tiny-1b.gguf')))).toBe(true);
    expect(thrownBy(() => downloads.cancel('tiny-1b'))).toMatchObject({ code: 'NOT_FOUND' });

    downloads.pull('tiny-1b');
    await until(() => entry(downloads, 'tiny-1b')?.installed === true);
    expect(server?.requests.at(-1)?.range).toBe(`bytes=${STALL}-`);
  });

  it('keeps the last failure for the list, and clears it when the model is pulled again', async () => {
    const { downloads } = await downloadsOf(0);
    server?.answers.push({ cutAfter: STALL });
    downloads.pull('tiny-1b');
    await until(() => entry(downloads, 'tiny-1b')?.lastError !== null);
    expect(entry(downloads, 'tiny-1b')?.lastError).toMatch(/^The download of tiny-1b from 127\.0\.0\.1:\d+ failed: the connection (broke|closed) after/);
    downloads.pull('tiny-1b');
    expect(entry(downloads, 'tiny-1b')?.lastError).toBeNull();
    await until(() => entry(downloads, 'tiny-1b')?.installed === true);
  });

  it('refuses names outside the catalogue; the signal it is given ends a download too', async () => {
    const { downloads } = await downloadsOf(1);
    expect(thrownBy(() => downloads.pull('no-such-model'))).toMatchObject({ code: 'NOT_FOUND' });
    const stop = new AbortController();
    downloads.pull('tiny-1b', stop.signal);
    await until(() => entry(downloads, 'tiny-1b')?.download?.doneBytes === STALL);
    stop.abort();
    await until(() => !downloads.isDownloading('tiny-1b'));
    expect(entry(downloads, 'tiny-1b')).toMatchObject({ installed: false, lastError: null, partialBytes: STALL });
  });

  it('cancels every download on close, waits for it to let go, and starts none after', async () => {
    const { downloads } = await downloadsOf(1);
    downloads.pull('tiny-1b');
    await until(() => entry(downloads, 'tiny-1b')?.download?.doneBytes === STALL);
    await downloads.close();
    expect(downloads.isDownloading('tiny-1b')).toBe(false);
    expect(entry(downloads, 'tiny-1b')).toMatchObject({ installed: false, partialBytes: STALL });
    expect(thrownBy(() => downloads.pull('tiny-2b'))).toMatchObject({ code: 'CANCELLED' });
  });
});
