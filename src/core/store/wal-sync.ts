import { close, fdatasync, openSync } from 'node:fs';
import { ArchonError } from '../../shared/errors';
import { diskFailing } from './open-database';

/** The two ways a write a person relies on reaches the disk before anything acts on it. */
export interface DurableWrites {
  /** Commits and flushes before returning (synchronous=FULL): for the rare writes nothing may run ahead of. */
  now<T>(write: () => T): T;
  /**
   * Commits at once (so a crash of this process keeps it), throwing at once when it cannot, and resolves
   * once it is on disk, sharing one flush with the commits around it (WalSync).
   */
  grouped<T>(write: () => T): Promise<T>;
}

/**
 * Group commit for a database in WAL mode: commits made with synchronous=NORMAL are in the WAL but
 * maybe not yet on disk; `sync()` resolves once every commit made before the call is. Concurrent
 * callers share one fdatasync of the WAL, run on libuv's thread pool, so the main thread never waits
 * on the disk and N commits in one burst cost one flush, not N. (fdatasync flushes the file, not the
 * descriptor: SQLite's own writes through its descriptor are covered.)
 */
export class WalSync {
  private fd: number | undefined;
  /** The flush under way, if any. */
  private running: Promise<void> | undefined;
  /** The flush queued behind it, covering commits made since `running` started. */
  private queued: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly walFile: string) {}

  sync(): Promise<void> {
    this.queued ??= (this.running ?? Promise.resolve()).then(
      () => this.start(),
      () => this.start(),
    );
    return this.queued;
  }

  /** Lets go of the file once any flush under way has ended. */
  close(): void {
    this.closed = true;
    const fd = this.fd;
    this.fd = undefined;
    if (fd === undefined) return;
    void (this.running ?? Promise.resolve()).catch(() => undefined).finally(() => close(fd, () => undefined));
  }

  private start(): Promise<void> {
    const flush = this.flush();
    this.queued = undefined;
    this.running = flush;
    void flush.catch(() => undefined).finally(() => {
      if (this.running === flush) this.running = undefined;
    });
    return flush;
  }

  private flush(): Promise<void> {
    if (this.closed) return Promise.reject(new ArchonError('STORE_FAILED', `${this.walFile} was closed before its writes reached the disk; resume the run to carry on.`));
    let fd: number;
    try {
      fd = this.fd ??= openSync(this.walFile, 'r+');
    } catch (error) {
      // No WAL: nothing was committed through one (SQLite synced the commit itself).
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return Promise.resolve();
      return Promise.reject(failed(this.walFile, error));
    }
    return new Promise((resolve, reject) => fdatasync(fd, (error) => (error ? reject(failed(this.walFile, error)) : resolve())));
  }
}

function failed(file: string, error: unknown): ArchonError {
  return diskFailing(`flushing ${file}: ${(error as Error).message}`, error);
}
