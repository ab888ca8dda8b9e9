import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { ArchonError } from '../../../src/shared/errors';
import { ArchonStore } from '../../../src/core/store/archon-store';
import { MIGRATIONS } from '../../../src/core/store/migrations';
import { openDatabase, writeTransaction } from '../../../src/core/store/open-database';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();

function expectStoreError(open: () => unknown, code: string, message: RegExp): void {
  try {
    open();
  } catch (error) {
    expect(ArchonError.isInstance(error)).toBe(true);
    expect((error as ArchonError).code).toBe(code);
    expect((error as ArchonError).message).toMatch(message);
    return;
  }
  throw new Error('expected opening to fail');
}

/** Another process changing the schema as fast as it can, each change on a connection it then closes (deleting the -wal file when it is the last). */
const SCHEMA_CHURN = `
const Database = require(process.argv[1]);
let round = 0;
for (;;) {
  const db = new Database(process.argv[2], { timeout: 5000 });
  db.exec('CREATE TABLE churn_' + round + ' (x); DROP TABLE churn_' + round);
  db.close();
  if (round++ === 0) process.stdout.write('churning');
}
`;

describe('openDatabase', () => {
  it('makes the database and its -wal and -shm files readable by the user alone (0600)', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'archon.db'), '', { mode: 0o644 });
    const store = ArchonStore.open(dir);
    try {
      store.updateSettings({ theme: 'dark' });
      for (const name of ['archon.db', 'archon.db-wal', 'archon.db-shm']) expect((statSync(join(dir, name)).mode & 0o777).toString(8), name).toBe('600');
    } finally {
      store.close();
    }
  });

  it('creates archon.db in an empty dir: WAL, every migration, every table, sqlite-vec loaded', () => {
    const store = ArchonStore.open(tempDir());
    try {
      expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(store.db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
      const tables = (store.db.prepare("SELECT name FROM sqlite_master WHERE type IN ('table')").all() as { name: string }[]).map((row) => row.name);
      for (const table of ['runs', 'steps', 'events', 'model_calls', 'tool_calls', 'approvals', 'budget_ledger', 'estops', 'settings', 'memory_items', 'memory_fts', 'memory_embeddings']) {
        expect(tables).toContain(table);
      }
      const distance = store.db.prepare('SELECT vec_distance_cosine(vec_f32(?), vec_f32(?)) AS d').get(JSON.stringify([1, 0, 0]), JSON.stringify([0, 1, 0])) as { d: number };
      expect(distance.d).toBeCloseTo(1);
    } finally {
      store.close();
    }
  });

  it('migrates a database from an older schema version and keeps its rows', () => {
    const file = join(tempDir(), 'archon.db');
    const old = openDatabase(file, { migrations: MIGRATIONS.slice(0, 1) });
    old.prepare("INSERT INTO runs (id, goal, status, policy, created_at, updated_at) VALUES ('r1', 'old goal', 'completed', 'balanced', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')").run();
    expect(old.pragma('user_version', { simple: true })).toBe(1);
    old.close();

    const upgraded = openDatabase(file, { migrations: MIGRATIONS });
    expect(upgraded.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    expect(upgraded.prepare('SELECT goal FROM runs').get()).toEqual({ goal: 'old goal' });
    expect(upgraded.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'approvals'").get()).toEqual({ n: 1 });
    upgraded.close();
  });

  it('refuses a corrupt file with a clear error and leaves it byte-for-byte unchanged', () => {
    const dir = tempDir();
    const file = join(dir, 'archon.db');
    const garbage = Buffer.from('this is not a database, just some bytes that happen to be here\n'.repeat(64));
    writeFileSync(file, garbage);
    expectStoreError(() => ArchonStore.open(dir), 'STORE_CORRUPT', /not a readable Archon database.*left untouched/);
    expect(readFileSync(file).equals(garbage)).toBe(true);
  });

  it('refuses a file with a SQLite header but garbage pages, unchanged', () => {
    const dir = tempDir();
    const file = join(dir, 'archon.db');
    const bytes = Buffer.alloc(8192, 0xab);
    Buffer.from('SQLite format 3\0', 'latin1').copy(bytes);
    writeFileSync(file, bytes);
    expectStoreError(() => ArchonStore.open(dir), 'STORE_CORRUPT', /left untouched/);
    expect(readFileSync(file).equals(bytes)).toBe(true);
  });

  it('finds a damaged page inside a valid database when it opens (quick_check), and never writes to it', () => {
    const dir = tempDir();
    const store = ArchonStore.open(dir);
    const options = { modelUrl: 'http://127.0.0.1:1/v1', model: '', policy: 'balanced' as const, concurrency: null, maxTokens: null, maxCostUsd: null, workspace: '/tmp', maxIterations: 10, verification: 'checks' as const, repairBudget: 2, maxReplans: 3 };
    for (let index = 0; index < 300; index++) store.runs.createRun({ id: `run-${index}`, goal: 'x'.repeat(200), policy: 'balanced', options, now: new Date().toISOString() });
    const { rootpage } = store.db.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'runs'").get() as { rootpage: number };
    store.close();
    const file = join(dir, 'archon.db');
    const bytes = readFileSync(file);
    const pageSize = bytes.readUInt16BE(16);
    Buffer.alloc(pageSize - 16, 0x5a).copy(bytes, pageSize * (rootpage - 1) + 16);
    writeFileSync(file, bytes);
    expectStoreError(() => ArchonStore.open(dir), 'STORE_CORRUPT', /damaged.*left untouched.*restore a backup/s);
    expect(readFileSync(file).equals(bytes)).toBe(true);
  });

  it('refuses a database from a newer Archon without touching it', () => {
    const dir = tempDir();
    const file = join(dir, 'archon.db');
    const future = new Database(file);
    future.pragma(`user_version = ${MIGRATIONS.length + 5}`);
    future.close();
    const before = readFileSync(file);
    expectStoreError(() => ArchonStore.open(dir), 'STORE_FAILED', /newer than this build/);
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  it('reports a database another process holds exclusively as STORE_LOCKED', () => {
    const dir = tempDir();
    const holder = new Database(join(dir, 'archon.db'));
    holder.exec('BEGIN EXCLUSIVE; CREATE TABLE held (x);');
    try {
      expectStoreError(() => openDatabase(join(dir, 'archon.db'), { migrations: MIGRATIONS, busyTimeoutMs: 50 }), 'STORE_LOCKED', /locked by another process/);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
  });

  it('compiles a SQL text once and hands back the same statement after, keeping at most 256 texts', () => {
    const db = openDatabase(join(tempDir(), 'archon.db'), { migrations: MIGRATIONS });
    try {
      const first = db.prepare('SELECT count(*) AS n FROM runs');
      expect(db.prepare('SELECT count(*) AS n FROM runs')).toBe(first);
      for (let index = 0; index < 256; index++) db.prepare(`SELECT ${index} AS n`);
      expect(db.prepare('SELECT count(*) AS n FROM runs')).not.toBe(first);
      expect(db.prepare('SELECT count(*) AS n FROM runs').get()).toEqual({ n: 0 });
    } finally {
      db.close();
    }
  });

  it('writes through one wrapper per connection: the result, a rollback, a nested savepoint, and the write lock taken before the first statement', () => {
    const file = join(tempDir(), 'archon.db');
    const db = openDatabase(file, { migrations: MIGRATIONS });
    const other = new Database(file, { timeout: 0 });
    try {
      db.exec('CREATE TABLE t (v TEXT)');
      const insert = (value: string) => db.prepare('INSERT INTO t (v) VALUES (?)').run(value);
      const values = () => (db.prepare('SELECT v FROM t ORDER BY rowid').all() as { v: string }[]).map((row) => row.v);

      expect(writeTransaction(db, () => (insert('a'), insert('b'), 'done'))).toBe('done');
      expect(() => writeTransaction(db, () => (insert('lost'), (() => { throw new Error('no'); })()))).toThrow('no');
      writeTransaction(db, () => {
        insert('kept');
        expect(() => writeTransaction(db, () => (insert('inner'), (() => { throw new Error('inner'); })()))).toThrow('inner');
      });
      expect(values()).toEqual(['a', 'b', 'kept']);
      expect(db.inTransaction).toBe(false);

      // IMMEDIATE: the write lock is held before anything is read or written.
      writeTransaction(db, () => expect(() => other.prepare("INSERT INTO t (v) VALUES ('other')").run()).toThrow(/locked/));
      other.prepare("INSERT INTO t (v) VALUES ('other')").run();
      expect(values()).toEqual(['a', 'b', 'kept', 'other']);
    } finally {
      other.close();
      db.close();
    }
  });

  it('opens while another process changes the schema and deletes the -wal file, a thousand times without an error', async () => {
    const dir = tempDir();
    const file = join(dir, 'archon.db');
    ArchonStore.open(dir).close();
    const churn = spawn(process.execPath, ['-e', SCHEMA_CHURN, createRequire(import.meta.url).resolve('better-sqlite3'), file], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = once(churn, 'exit');
    try {
      await once(churn.stdout, 'data');
      const failures = new Map<string, number>();
      for (let attempt = 0; attempt < 1000; attempt++) {
        try {
          openDatabase(file, { migrations: MIGRATIONS }).close();
        } catch (error) {
          const message = (error as Error).message;
          failures.set(message, (failures.get(message) ?? 0) + 1);
        }
      }
      expect(Object.fromEntries(failures)).toEqual({});
      expect(churn.exitCode, 'the churning process was still changing the schema').toBeNull();
    } finally {
      churn.kill();
      await exited;
    }
  });
});
