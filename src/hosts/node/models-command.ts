import { resolveDataDir } from '../../core/data-dir';
import { formatBytes } from '../../shared/byte-size';
import { ModelLibrary, type PullSource } from '../../core/models/model-library';
import { ArchonError, describeZodError } from '../../shared/errors';
import { Sha256Schema, type DownloadProgress, type LibraryModel } from '../../shared/schemas/models';
import { terminalText } from './terminal-text';

export interface ModelsFlags {
  dataDir?: string;
}

export interface PullFlags extends ModelsFlags {
  url?: string;
  sha256?: string;
}

/** `archon models pull`: 0 installed, 1 the download failed (kept to resume, or removed when it did not verify), 3 cancelled; a usage error is 2, a short disk 6. */
const PULL_EXIT = { ok: 0, failed: 1, cancelled: 3 } as const;

/** How often a terminal's progress bar is redrawn, and the steps of the progress lines when stderr is not a terminal. */
const REDRAW_MS = 100;
const LINE_PERCENT_STEP = 10;
const LINE_BYTES_STEP = 100_000_000;
const BAR_WIDTH = 30;

function library(flags: ModelsFlags): ModelLibrary {
  return new ModelLibrary(resolveDataDir(flags.dataDir));
}

function state(model: LibraryModel): string {
  if (model.installed) return 'installed';
  if (model.source === 'local') return 'missing';
  return model.partialBytes > 0 ? `partial ${formatBytes(model.partialBytes)}` : 'not installed';
}

function describe(model: LibraryModel): string {
  const size = model.sizeBytes === null ? '?' : formatBytes(model.sizeBytes);
  const memory = model.memoryBytes === null ? '' : `, needs ${formatBytes(model.memoryBytes)} of memory`;
  const licence = model.licence === null ? '' : `, ${model.licence}`;
  const where = model.source === 'local' ? `\n  ${terminalText(model.path ?? '', { keepNewlines: false })}` : '';
  return `${model.name.padEnd(16)} ${state(model).padEnd(18)} ${size.padStart(8)}  ${model.source.padEnd(7)}  ${terminalText(model.title, { keepNewlines: false })}${licence}${memory}${where}\n`;
}

/** `archon models list`: the catalogue with what is installed, then the models pulled from URLs and the local files added. */
export function listModels(flags: ModelsFlags & { json?: boolean }): number {
  const models = library(flags);
  const listed = models.list();
  for (const model of listed) process.stdout.write(flags.json ? `${JSON.stringify(model)}\n` : describe(model));
  if (!flags.json) process.stdout.write(`\nModels live in ${models.dir}. \`archon models pull NAME\` downloads one; \`archon models add PATH.gguf\` adds a file you have.\n`);
  return 0;
}

function pullSource(flags: PullFlags): PullSource | undefined {
  if (flags.url === undefined && flags.sha256 === undefined) return undefined;
  if (flags.url === undefined || flags.sha256 === undefined) throw new ArchonError('VALIDATION_FAILED', '--url and --sha256 go together: give the file\'s URL and its published SHA-256.');
  if (!/^https?:\/\//i.test(flags.url) || !URL.canParse(flags.url)) throw new ArchonError('VALIDATION_FAILED', `--url ${flags.url} is not an http(s) URL.`);
  const sha256 = Sha256Schema.safeParse(flags.sha256.toLowerCase());
  if (!sha256.success) throw new ArchonError('VALIDATION_FAILED', `--sha256: ${describeZodError(sha256.error)}.`);
  return { url: flags.url, sha256: sha256.data };
}

function percent(progress: DownloadProgress): number | null {
  return progress.totalBytes ? Math.floor((progress.doneBytes / progress.totalBytes) * 100) : null;
}

function bar(name: string, progress: DownloadProgress): string {
  const done = percent(progress);
  const filled = done === null ? 0 : Math.round((done / 100) * BAR_WIDTH);
  const amount = progress.totalBytes === null ? formatBytes(progress.doneBytes) : `${formatBytes(progress.doneBytes)} / ${formatBytes(progress.totalBytes)}`;
  return `\r\x1b[K${name} [${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${done === null ? '' : `${done}% `}${amount}`;
}

/** A bar redrawn in place on a terminal; otherwise a line per 10% (per 100 MB when the size is unknown). */
function progressReporter(name: string, stream: NodeJS.WriteStream) {
  let lastDraw = 0;
  let lastStep = -1;
  return {
    update(progress: DownloadProgress): void {
      if (stream.isTTY) {
        const now = Date.now();
        if (now - lastDraw < REDRAW_MS && progress.doneBytes !== progress.totalBytes) return;
        lastDraw = now;
        stream.write(bar(name, progress));
        return;
      }
      const done = percent(progress);
      const step = done === null ? Math.floor(progress.doneBytes / LINE_BYTES_STEP) : Math.floor(done / LINE_PERCENT_STEP);
      if (step === lastStep) return;
      lastStep = step;
      stream.write(`${name}: ${done === null ? '' : `${done}% `}${formatBytes(progress.doneBytes)}${progress.totalBytes === null ? '' : ` of ${formatBytes(progress.totalBytes)}`}\n`);
    },
    end(): void {
      if (stream.isTTY && lastDraw > 0) stream.write('\n');
    },
  };
}

/** `archon models pull NAME [--url URL --sha256 HEX]`: downloads, resumes an interrupted pull, verifies; Ctrl-C keeps what was downloaded. */
export async function pullModel(name: string, flags: PullFlags): Promise<number> {
  const source = pullSource(flags);
  const controller = new AbortController();
  const interrupt = () => controller.abort();
  process.once('SIGINT', interrupt);
  const progress = progressReporter(name, process.stderr);
  try {
    const { model, download } = await library(flags).pull(name, { source, signal: controller.signal, onProgress: progress.update });
    progress.end();
    if (!download) process.stdout.write(`${name} is already installed: ${model.path ?? ''}\n`);
    else process.stdout.write(`Pulled ${name} (${formatBytes(download.bytes)}${download.resumedFromBytes > 0 ? `, resumed after ${formatBytes(download.resumedFromBytes)}` : ''}), SHA-256 verified: ${download.file}\n`);
    return PULL_EXIT.ok;
  } catch (error) {
    progress.end();
    if (!ArchonError.isInstance(error) || (error.code !== 'DOWNLOAD_FAILED' && error.code !== 'CANCELLED')) throw error;
    process.stderr.write(`archon: ${error.message}\n`);
    return error.code === 'CANCELLED' ? PULL_EXIT.cancelled : PULL_EXIT.failed;
  } finally {
    process.off('SIGINT', interrupt);
  }
}

/** `archon models rm NAME`: deletes a pulled model's file; a local file added is only forgotten, never deleted. */
export function removeModel(name: string, flags: ModelsFlags): number {
  const removed = library(flags).remove(name);
  if (removed.source === 'local') process.stdout.write(`Removed ${name} from the library; the file ${removed.path ?? ''} is left where it is.\n`);
  else process.stdout.write(`Removed ${name}${removed.sizeBytes !== null && removed.installed ? ` (${formatBytes(removed.sizeBytes)} freed)` : ''}.\n`);
  return 0;
}

/** `archon models add PATH.gguf [--name NAME]`: records a local GGUF file (checked by its magic bytes) where it is. */
export function addModel(file: string, flags: ModelsFlags & { name?: string }): number {
  const added = library(flags).add(file, flags.name);
  process.stdout.write(`Added ${added.name}: ${added.path ?? file} (${added.sizeBytes === null ? '?' : formatBytes(added.sizeBytes)}).\n`);
  return 0;
}
