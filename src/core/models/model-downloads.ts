import { anySignal } from '../../shared/abort';
import { ArchonError } from '../../shared/errors';
import type { ModelEntry } from '../../shared/ipc/contract';
import type { DownloadProgress, LibraryModel } from '../../shared/schemas/models';
import type { ModelLibrary } from './model-library';

/** Downloads at once: each takes a connection and a disk's write bandwidth; more only slows them all. */
export const MAX_DOWNLOADS = 2;

interface Running {
  controller: AbortController;
  progress: DownloadProgress;
  settled: Promise<void>;
}

/** Before the server answers: under way, size unknown. */
const STARTING: DownloadProgress = { doneBytes: 0, totalBytes: null };

/**
 * The app's model downloads: each pull runs in the background with its own AbortController, its
 * progress and last error kept for `list` (the Models view polls it), at most `MAX_DOWNLOADS` at once,
 * every one cancellable and all cancelled on `close`.
 */
export class ModelDownloads {
  private readonly running = new Map<string, Running>();
  /** Only names of the library's models get here, so it is as bounded as the library. */
  private readonly errors = new Map<string, string>();
  private closed = false;

  constructor(
    private readonly library: Pick<ModelLibrary, 'list' | 'pull'>,
    private readonly limit = MAX_DOWNLOADS,
  ) {}

  list(): ModelEntry[] {
    return this.library.list().map((model) => ({ ...model, download: this.running.get(model.name)?.progress ?? null, lastError: this.errors.get(model.name) ?? null }));
  }

  /** Starts pulling `name` and returns at once; `signal` (the emergency stop's) ends it too. */
  pull(name: string, signal?: AbortSignal): void {
    const model = this.pullable(name);
    const controller = new AbortController();
    const entry: Running = { controller, progress: STARTING, settled: Promise.resolve() };
    entry.settled = this.library
      .pull(model.name, { signal: anySignal(controller.signal, signal), onProgress: (progress) => (entry.progress = progress) })
      .then(
        () => undefined,
        (error: unknown) => this.failed(model.name, error),
      )
      .finally(() => this.running.delete(model.name));
    this.errors.delete(model.name);
    this.running.set(model.name, entry);
  }

  cancel(name: string): void {
    const entry = this.running.get(name);
    if (!entry) throw new ArchonError('NOT_FOUND', `No download of ${name} is running: there is nothing to cancel.`);
    entry.controller.abort();
  }

  isDownloading(name: string): boolean {
    return this.running.has(name);
  }

  /** Cancels every download and waits until each has let go of its files. */
  async close(): Promise<void> {
    this.closed = true;
    const settling = [...this.running.values()].map((entry) => {
      entry.controller.abort();
      return entry.settled;
    });
    await Promise.all(settling);
  }

  private pullable(name: string): LibraryModel {
    if (this.closed) throw new ArchonError('CANCELLED', 'Archon is closing: downloads can no longer start. Open it again, then download the model.');
    if (this.running.has(name)) throw new ArchonError('VALIDATION_FAILED', `${name} is already downloading: wait for it to finish, or cancel it first.`);
    const model = this.library.list().find((candidate) => candidate.name === name);
    if (!model) throw new ArchonError('NOT_FOUND', `There is no model ${name} in the catalogue: choose one the Models view lists.`);
    if (model.source !== 'catalog') throw new ArchonError('VALIDATION_FAILED', `${name} was not pulled from the catalogue: pull it again with \`archon models pull ${name} --url URL --sha256 HEX\`.`);
    if (model.installed) throw new ArchonError('VALIDATION_FAILED', `${name} is already installed: press Use to run with it.`);
    if (this.running.size >= this.limit) throw new ArchonError('VALIDATION_FAILED', `${this.limit} downloads are running already: wait for one to finish, or cancel one, then download ${name}.`);
    return model;
  }

  /** A cancelled download is no failure: what it kept is shown as partial, and Download resumes it. */
  private failed(name: string, error: unknown): void {
    if (ArchonError.isInstance(error) && error.code === 'CANCELLED') return;
    this.errors.set(name, error instanceof Error ? error.message : String(error));
  }
}
