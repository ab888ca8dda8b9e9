import { chmodSync, closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { getLoadablePath } from 'sqlite-vec';
import { ArchonError } from '../../shared/errors';
import type { Migration } from './migrations';

export type SqliteDatabase = Database.Database;

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

export interface OpenDatabaseOptions {
  migrations: readonly Migration[];
  busyTimeoutMs?: number;
}

function corrupt(file: string, why: string, cause?: unknown): ArchonError {
  return new ArchonError(
    'STORE_CORRUPT',
    `${file} is not a readable Archon database (${why}). It was left untouched. ` +
      'Move it aside or restore a backup, then start Archon again to create a new one.',
    { cause },
  );
}

/** Refuses a file that is not SQLite before SQLite gets a chance to write anything to it. */
function assertSqliteHeader(file: string): void {
  if (!existsSync(file) || statSync(file).size === 0) return;
  const header = Buffer.alloc(SQLITE_HEADER.length);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, header, 0, header.length, 0);
  } finally {
    closeSync(fd);
  }
  if (!header.equals(SQLITE_HEADER)) throw corrupt(file, 'it does not start with the SQLite header');
}

/**
 * The database and its -wal and -shm files readable by the user alone (0600). SQLite gives the
 * files it creates the mode of the database file, so creating that one 0600 covers the others.
 */
function restrictToOwner(file: string): void {
  closeSync(openSync(file, 'a', 0o600));
  for (const path of [`${file}-wal`, `${file}-shm`]) chmodIfPresent(path);
  chmodSync(file, 0o600);
}

/** Another process's last connection deletes the -wal file as it closes, possibly between our look and our chmod. */
function chmodIfPresent(path: string): void {
  try {
    chmodSync(path, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

function toStoreError(error: unknown, file: string): ArchonError {
  if (ArchonError.isInstance(error)) return error;
  const code = (error as { code?: string }).code ?? '';
  const message = (error as Error).message;
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) return corrupt(file, message, error);
  if (DISK_FAILURES.has(code)) return diskFailing(`opening ${file}: ${message}`, error);
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return new ArchonError(
      'STORE_LOCKED',
      `${file} is locked by another process (${message}). Close the other Archon instance or wait, then try again.`,
      { cause: error },
    );
  }
  return new ArchonError('STORE_FAILED', `Cannot use the database ${file}: ${message}`, { cause: error });
}

/** SQLite's codes for a disk that refused to grow a file (SHMSIZE: the -shm index a WAL database needs, even to read). */
const DISK_FAILURES = new Set(['SQLITE_FULL', 'SQLITE_IOERR_WRITE', 'SQLITE_IOERR_FSYNC', 'SQLITE_IOERR_SHMSIZE']);

/** The disk under the data dir refused a write or a flush (`what` says which): the operator frees space, then resumes. */
export function diskFailing(what: string, cause: unknown): ArchonError {
  return new ArchonError('DISK_FULL', `The disk holding Archon's data is full or failing (${what}). Free some space, then resume the run.`, { cause });
}

/** Other processes held the write lock past the busy timeout: nothing was lost, and the run is paused rather than stopped or re-planned. */
function storeBusy(what: string, cause: unknown): ArchonError {
  return new ArchonError(
    'STORE_LOCKED',
    `Archon's database stayed busy with other Archon processes' writes longer than Archon waits for it (${what}). Nothing was lost: resume the run once fewer runs write at once.`,
    { cause },
  );
}

/** A failed write the operator can fix, as a typed error: a full disk or a database busy for too long pauses a run rather than failing it. */
export function asStoreError(error: unknown): ArchonError | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !code.startsWith('SQLITE_')) return null;
  if (DISK_FAILURES.has(code)) return diskFailing((error as Error).message, error);
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return storeBusy((error as Error).message, error);
  return new ArchonError('STORE_FAILED', `Archon's database failed: ${(error as Error).message}.`, { cause: error });
}

/** sqlite-vec cannot be loaded from inside an asar archive; packaged apps unpack it beside it. */
function vectorExtensionPath(): string {
  return getLoadablePath().replace(/app\.asar([\\/])/, 'app.asar.unpacked$1');
}

/** A damaged page is found before anything is written: the file is refused, with advice, and left as it is. */
function assertIntact(db: SqliteDatabase, file: string): void {
  const problems = (db.pragma('quick_check(5)') as { quick_check: string }[]).map((row) => row.quick_check).filter((line) => line !== 'ok');
  if (problems.length > 0) throw corrupt(file, `damaged: ${problems.join('; ')}`);
}

function schemaVersion(db: SqliteDatabase, file: string, migrations: readonly Migration[]): number {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > migrations.length) {
    throw new ArchonError(
      'STORE_FAILED',
      `${file} has schema version ${version}, newer than this build of Archon knows (${migrations.length}). ` +
        'Update Archon, or point --data-dir at another folder. The file was left untouched.',
    );
  }
  return version;
}

/**
 * The checks before migrating, on one snapshot: a process migrating at the same moment changes the
 * schema, and a check reading it half before and half after fails with SQLITE_SCHEMA ("vtable
 * constructor failed" when the full-text index is reconnected).
 */
function inspect(db: SqliteDatabase, file: string, migrations: readonly Migration[]): number {
  const onOneSnapshot = db.transaction(() => {
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    assertIntact(db, file);
    return schemaVersion(db, file, migrations);
  });
  return onOneSnapshot.deferred();
}

/** Each migration under the write lock, applied only when still due: processes opening a fresh data dir at once apply it once. */
function migrate(db: SqliteDatabase, fromVersion: number, migrations: readonly Migration[]): void {
  for (let index = fromVersion; index < migrations.length; index++) {
    const migration = migrations[index] as Migration;
    writeTransaction(db, () => {
      if ((db.pragma('user_version', { simple: true }) as number) !== index) return;
      db.exec(migration.sql);
      db.pragma(`user_version = ${index + 1}`);
    });
  }
}

const PREPARED_STATEMENTS = 256;

/**
 * Compiles each SQL text once per connection: the stores prepare at every call, and compiling cost
 * more than running (a tenth of a wide run's main thread). Least recently used texts go first, for
 * the few texts built per call. Safe because no caller changes a statement's mode (pluck, raw, bind).
 */
function reusePreparedStatements(db: SqliteDatabase): void {
  const compile = db.prepare.bind(db);
  const prepared = new Map<string, Database.Statement>();
  db.prepare = ((source: string) => {
    const statement = prepared.get(source) ?? compile(source);
    prepared.delete(source);
    prepared.set(source, statement);
    if (prepared.size > PREPARED_STATEMENTS) prepared.delete(prepared.keys().next().value as string);
    return statement;
  }) as SqliteDatabase['prepare'];
}

type WriteWrapper = Database.Transaction<(write: () => unknown) => unknown>;

const writeWrappers = new WeakMap<SqliteDatabase, WriteWrapper>();

/**
 * The one way Archon writes more than a statement at a time. It begins IMMEDIATE: the write lock is
 * taken first, waiting out the busy timeout while another process writes. A deferred transaction
 * that reads before it writes fails at once under WAL (SQLITE_BUSY, no wait) when another process
 * committed in between. Nested, it is a savepoint. One wrapper per connection, built once:
 * better-sqlite3 builds four at every `transaction()` call, most of a small write's cost.
 */
export function writeTransaction<T>(db: SqliteDatabase, write: () => T): T {
  let wrapper = writeWrappers.get(db);
  if (wrapper === undefined) {
    wrapper = db.transaction((inside: () => unknown) => inside());
    writeWrappers.set(db, wrapper);
  }
  return wrapper.immediate(write) as T;
}

/**
 * Opens (creating when missing) a SQLite file in WAL mode with sqlite-vec loaded and all
 * migrations applied. A corrupt, foreign or locked file yields a typed error and is never rewritten.
 */
export function openDatabase(file: string, options: OpenDatabaseOptions): SqliteDatabase {
  assertSqliteHeader(file);
  let db: SqliteDatabase;
  try {
    restrictToOwner(file);
    db = new Database(file, { timeout: options.busyTimeoutMs ?? 5000 });
  } catch (error) {
    throw toStoreError(error, file);
  }
  try {
    db.loadExtension(vectorExtensionPath());
    const version = inspect(db, file, options.migrations);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    migrate(db, version, options.migrations);
    reusePreparedStatements(db);
    return db;
  } catch (error) {
    db.close();
    throw toStoreError(error, file);
  }
}
