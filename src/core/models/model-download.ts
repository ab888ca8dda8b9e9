import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readFile, rename, rm, stat, statfs, writeFile } from 'node:fs/promises';
import { totalmem } from 'node:os';
import { dirname } from 'node:path';
import { ArchonError } from '../../shared/errors';
import type { DownloadProgress } from '../../shared/schemas/models';
import { formatBytes } from '../../shared/byte-size';
import { lockDownload } from './download-lock';
import { hasGgufMagic } from './gguf-file';

/** What to download and where: the final file appears only once it is whole and verified. */
export interface DownloadTarget {
  /** The model's name, for the messages. */
  name: string;
  url: string;
  sha256: string;
  file: string;
  /** The expected size, for the disk check before any request; the server's own length wins once it answers. */
  sizeBytes?: number;
  memoryBytes?: number;
}

export interface DownloadOptions {
  onProgress?: (progress: DownloadProgress) => void;
  signal?: AbortSignal;
}

export interface DownloadResult {
  file: string;
  bytes: number;
  /** The bytes an earlier, interrupted download had already kept (0 for a fresh one). */
  resumedFromBytes: number;
}

interface OpenedDownload {
  body: ReadableStream<Uint8Array>;
  start: number;
  total: number | null;
}

/** The interrupted download a pull resumes from, beside the final file. */
export function partFileOf(file: string): string {
  return `${file}.part`;
}

async function sizeOf(file: string): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch {
    return 0;
  }
}

/** Refuses a model this machine cannot run, before a byte is fetched. */
function checkMemory(target: DownloadTarget): void {
  const total = totalmem();
  if (target.memoryBytes === undefined || total >= target.memoryBytes) return;
  throw new ArchonError(
    'CONFIG_INVALID',
    `${target.name} needs about ${formatBytes(target.memoryBytes)} of memory to run; this machine has ${formatBytes(total)}. Choose a smaller model (\`archon models list\`).`,
  );
}

/** Refuses a download the disk holding the library cannot take. */
async function checkRoom(name: string, dir: string, bytes: number): Promise<void> {
  const disk = await statfs(dir);
  const free = disk.bavail * disk.bsize;
  if (free >= bytes) return;
  throw new ArchonError(
    'DISK_FULL',
    `${name} needs ${formatBytes(bytes)} more on the disk holding ${dir}, which has ${formatBytes(free)} free. Free some space (or use a --data-dir on a larger disk), then pull again.`,
  );
}

function failed(target: DownloadTarget, problem: string, cause?: unknown): ArchonError {
  return new ArchonError('DOWNLOAD_FAILED', `The download of ${target.name} from ${new URL(target.url).host} failed: ${problem}`, { cause });
}

/** `Content-Range: bytes START-END/TOTAL` (TOTAL may be `*`). */
function contentRange(response: Response): { start: number; total: number | null } | null {
  const match = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(response.headers.get('content-range') ?? '');
  if (!match) return null;
  return { start: Number(match[1]), total: match[2] === '*' ? null : Number(match[2]) };
}

function contentLength(response: Response): number | null {
  const length = Number(response.headers.get('content-length') ?? Number.NaN);
  return Number.isSafeInteger(length) && length >= 0 ? length : null;
}

async function request(target: DownloadTarget, offset: number, signal: AbortSignal | undefined): Promise<Response> {
  try {
    return await fetch(target.url, { headers: offset > 0 ? { range: `bytes=${offset}-` } : {}, signal });
  } catch (error) {
    if (signal?.aborted) throw error;
    const { cause } = error as Error;
    throw failed(target, `${cause instanceof Error ? cause.message : (error as Error).message}. Check the network (and the URL), then pull again.`, error);
  }
}

/** The file's length, as a 416 gives it in its Content-Range. */
function unsatisfiedLength(response: Response): number | null {
  const match = /^bytes \*\/(\d+)$/.exec(response.headers.get('content-range') ?? '');
  return match ? Number(match[1]) : null;
}

/** Nothing more to read: the kept part is already the whole file (a pull stopped before its rename). */
function emptyBody(): ReadableStream<Uint8Array> {
  return new ReadableStream({ start: (controller) => controller.close() });
}

/**
 * Asks for the bytes from `offset` on. A server that answers the Range resumes; one that ignores it
 * (200) starts over; a 416 for a part as long as the file leaves it to be verified, and for any other
 * part (longer than the file) asks again for the whole file, once.
 */
async function openDownload(target: DownloadTarget, offset: number, signal: AbortSignal | undefined): Promise<OpenedDownload> {
  const response = await request(target, offset, signal);
  const range = response.status === 206 ? contentRange(response) : null;
  if (response.body && offset > 0 && range?.start === offset) return { body: response.body, start: offset, total: range.total };
  if (response.body && response.status === 200) return { body: response.body, start: 0, total: contentLength(response) };
  await response.body?.cancel();
  if (offset > 0 && response.status === 416 && unsatisfiedLength(response) === offset) return { body: emptyBody(), start: offset, total: offset };
  if (offset > 0 && (response.status === 416 || response.status === 206)) return openDownload(target, 0, signal);
  throw failed(target, `the server answered ${response.status} ${response.statusText}. Check the URL, then pull again.`);
}

/** The server's length is known only once it answers: a disk short of it is refused before the body is read. */
async function checkRoomFor(target: DownloadTarget, opened: OpenedDownload): Promise<void> {
  if (opened.total === null) return;
  try {
    await checkRoom(target.name, dirname(target.file), opened.total - opened.start);
  } catch (error) {
    await opened.body.cancel();
    throw error;
  }
}

async function hashFile(file: string, hash: Hash, signal: AbortSignal | undefined): Promise<void> {
  for await (const chunk of createReadStream(file, { signal })) hash.update(chunk as Buffer);
}

/** Writes the body after the `start` bytes the part file holds, hashing and counting as it goes. */
async function writeBody(target: DownloadTarget, part: string, opened: OpenedDownload, hash: Hash, options: DownloadOptions): Promise<number> {
  const handle = await open(part, opened.start > 0 ? 'a' : 'w');
  let done = opened.start;
  try {
    for await (const chunk of opened.body) {
      done += chunk.byteLength;
      if (opened.total !== null && done > opened.total) throw failed(target, `the server sent more than the ${formatBytes(opened.total)} it announced. Pull again.`);
      await handle.write(chunk);
      hash.update(chunk);
      options.onProgress?.({ doneBytes: done, totalBytes: opened.total });
    }
    await handle.sync();
  } catch (error) {
    if (options.signal?.aborted || ArchonError.isInstance(error)) throw error;
    if ((error as NodeJS.ErrnoException).code === 'ENOSPC') throw diskFilled(target, part);
    throw failed(target, `the connection broke after ${formatBytes(done)}. Pull again: it resumes from there.`, error);
  } finally {
    await handle.close();
  }
  if (opened.total !== null && done < opened.total) throw failed(target, `the connection closed after ${formatBytes(done)} of ${formatBytes(opened.total)}. Pull again: it resumes from there.`);
  return done;
}

/** Beside a part: the URL and SHA-256 it is the start of. */
export const partSourceOf = (part: string) => `${part}.source`;

/** A part a pull of another URL or file left (the catalogue changed, --url differs) is not the start of this one: it is dropped. */
async function keepOnlyPartOf(target: DownloadTarget, part: string): Promise<void> {
  const source = JSON.stringify({ url: target.url, sha256: target.sha256 });
  const previous = await readFile(partSourceOf(part), 'utf8').catch(() => null);
  if (previous !== null && previous !== source) await rm(part, { force: true });
  await writeFile(partSourceOf(part), source, { mode: 0o600 });
}

async function verified(target: DownloadTarget, part: string, digest: string): Promise<void> {
  if (digest === target.sha256 && hasGgufMagic(part)) return;
  await rm(part, { force: true });
  if (digest !== target.sha256) {
    throw failed(target, `the file's SHA-256 is ${digest}, not the published ${target.sha256}, so it was removed. Pull again; if it fails again, the file at that URL is not the one expected (with --url, check the URL and --sha256).`);
  }
  throw failed(target, 'the file is not a GGUF model, so it was removed. Check the URL.');
}

function diskFilled(target: DownloadTarget, part: string): ArchonError {
  return new ArchonError('DISK_FULL', `The disk holding ${dirname(part)} filled up during the download of ${target.name}. Free some space, then pull again: it resumes from what was kept.`);
}

function cancelled(target: DownloadTarget, kept: number): ArchonError {
  return new ArchonError('CANCELLED', `The download of ${target.name} was cancelled; the ${formatBytes(kept)} downloaded so far are kept. Pull again to resume.`);
}

/**
 * Downloads `target.url` to `target.file`: resumable through a `.part` file beside it (an HTTP Range
 * from the part's size), SHA-256 checked at the end (a mismatch removes the file), refused up front
 * when memory or the disk is short, cancelled by the signal, and renamed into place only when whole.
 */
export async function downloadModel(target: DownloadTarget, options: DownloadOptions = {}): Promise<DownloadResult> {
  const part = partFileOf(target.file);
  checkMemory(target);
  const release = lockDownload(part, target.name);
  try {
    await keepOnlyPartOf(target, part);
    const kept = await sizeOf(part);
    if (target.sizeBytes !== undefined) await checkRoom(target.name, dirname(target.file), Math.max(0, target.sizeBytes - kept));
    const opened = await openDownload(target, kept, options.signal);
    await checkRoomFor(target, opened);
    const hash = createHash('sha256');
    if (opened.start > 0) await hashFile(part, hash, options.signal);
    options.onProgress?.({ doneBytes: opened.start, totalBytes: opened.total });
    const bytes = await writeBody(target, part, opened, hash, options);
    await verified(target, part, hash.digest('hex'));
    await rename(part, target.file);
    await rm(partSourceOf(part), { force: true });
    return { file: target.file, bytes, resumedFromBytes: opened.start };
  } catch (error) {
    if (options.signal?.aborted) throw cancelled(target, await sizeOf(part));
    throw error;
  } finally {
    release();
  }
}
