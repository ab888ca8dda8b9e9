import { createHmac, createSecretKey, hash as digest, timingSafeEqual, type KeyObject } from 'node:crypto';
import { chmodSync, closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { canonicalJson } from '../shared/canonical-json';
import { parseJsonOrUndefined } from '../shared/json';
import { ArchonError } from '../shared/errors';
import type { VerifyResult } from '../shared/schemas/audit';
import type { AuditSecrets } from './audit-key';

export const AUDIT_DB_FILE = 'audit.db';
const GENESIS = '0'.repeat(64);
/** Archon's own deletion of a run (`runs.delete`), recorded once per run from archon.db's tombstones. */
export const RUN_DELETED_TYPE = 'run.deleted';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS records (
    seq INTEGER PRIMARY KEY,
    ts TEXT NOT NULL,
    run_id TEXT,
    event_seq INTEGER,
    type TEXT NOT NULL,
    canonical_json TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL,
    hmac TEXT NOT NULL
  );
  CREATE UNIQUE INDEX IF NOT EXISTS records_run_event ON records (run_id, event_seq);
  CREATE INDEX IF NOT EXISTS records_deleted_run ON records (run_id) WHERE type = '${RUN_DELETED_TYPE}';
  CREATE UNIQUE INDEX IF NOT EXISTS records_estop ON records (event_seq) WHERE run_id IS NULL AND event_seq IS NOT NULL;
  CREATE TABLE IF NOT EXISTS thresholds (name TEXT PRIMARY KEY, value REAL NOT NULL);
  CREATE TRIGGER IF NOT EXISTS records_no_update BEFORE UPDATE ON records BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
  CREATE TRIGGER IF NOT EXISTS records_no_delete BEFORE DELETE ON records BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
`;

export const AuditRecordSchema = z.object({
  seq: z.int().positive(),
  ts: z.string(),
  run_id: z.string().nullable(),
  /** The run event's own seq in archon.db, or an emergency stop's id (null for the auditor's own records, such as a reset). */
  event_seq: z.int().positive().nullable(),
  type: z.string(),
  canonical_json: z.string(),
  prev_hash: z.string(),
  hash: z.string(),
  hmac: z.string(),
});
export type AuditRecord = z.infer<typeof AuditRecordSchema>;

/** What the auditor writes down: a run event or an emergency stop as archon.db holds it, or one of its own records. */
export interface AuditEntry {
  runId: string | null;
  eventSeq: number | null;
  type: string;
  ts: string;
  body: unknown;
}

/** `anchored`: signed by an auditor that keeps the anchor, so a head without its anchor beside it means the anchor was removed. */
const HeadSchema = z.object({ seq: z.int().nonnegative(), hash: z.string(), anchored: z.literal(true).optional(), hmac: z.string() });
export type SignedHead = z.infer<typeof HeadSchema>;

type Hashed = Pick<AuditRecord, 'seq' | 'ts' | 'run_id' | 'event_seq' | 'type' | 'canonical_json'>;

/** A record's hash covers every column but its own hash and HMAC, chained to the previous hash. */
function hashOf(prevHash: string, record: Hashed): string {
  return digest('sha256', `${prevHash}\n${record.seq}\n${record.ts}\n${record.run_id ?? ''}\n${record.event_seq ?? ''}\n${record.type}\n${record.canonical_json}`);
}

/** Reads the head (or anchor) file as stored, signed or not (a reset quotes it either way). */
export function readStoredHead(headFile: string): SignedHead | null {
  if (!existsSync(headFile)) return null;
  const parsed = HeadSchema.safeParse(parseJsonOrUndefined(readFileSync(headFile, 'utf8')));
  return parsed.success ? parsed.data : { seq: -1, hash: 'unreadable', hmac: '' };
}

const headMessage = (head: { seq: number; hash: string; anchored?: true }) => `${head.seq}:${head.hash}${head.anchored ? ':anchored' : ''}`;
const anchorMessage = (anchor: { seq: number; hash: string }) => `anchor:${anchor.seq}:${anchor.hash}`;

/** Temp file, fsync, rename: the file holds the old content or the new, never half of either. */
function writeAtomically(file: string, content: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  const fd = openSync(temporary, 'w', 0o600);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, file);
}

function openFile(file: string, readonly: boolean): Database.Database {
  if (readonly) {
    const db = new Database(file, { readonly: true, fileMustExist: true, timeout: 5000 });
    const hasRecords = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'records'").get() as { n: number };
    if (hasRecords.n > 0) return db;
    db.close();
    return new Database(':memory:');
  }
  // 0600 before SQLite opens it: its -wal and -shm files take the database file's mode.
  closeSync(openSync(file, 'a', 0o600));
  for (const path of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(path)) chmodSync(path, 0o600);
  const db = new Database(file, { timeout: 5000 });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  return db;
}

/**
 * audit.db: the auditor's own append-only, hash-chained log. Each record holds its canonical JSON,
 * the run and seq of the event it records, the previous record's hash, its own SHA-256 and an HMAC
 * under a key kept outside the data dir; the signed head of the chain is kept beside the key, so a
 * cut-off tail or an older copy is caught too. Each batch commits (synchronous=FULL) before the head
 * is signed: a crash between the two leaves the head behind the log, never ahead of it.
 */
export class AuditLog {
  private readonly hmacKey: KeyObject | null;
  /** Prepared once: appends come in many batches. */
  private insert: Database.Statement | undefined;

  private constructor(
    private readonly db: Database.Database,
    private readonly secrets: AuditSecrets,
    /** Whether audit.db was there when it was opened (missing and empty are told apart). */
    readonly existed: boolean,
    /** Whether the append-only triggers were in place when the file was opened. */
    private readonly triggersFound: boolean,
  ) {
    this.hmacKey = secrets.key ? createSecretKey(secrets.key) : null;
  }

  /** Read-only, audit.db is never created or changed (a missing file reads as a log with no records). */
  static open(dataDir: string, secrets: AuditSecrets, options: { readonly?: boolean } = {}): AuditLog {
    const file = join(dataDir, AUDIT_DB_FILE);
    const existed = existsSync(file);
    let db: Database.Database | undefined;
    try {
      db = existed || !options.readonly ? openFile(file, options.readonly ?? false) : new Database(':memory:');
      const fresh = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'records'").get() as { n: number };
      const triggers = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'records'").get() as { n: number };
      const columns = db.prepare("SELECT count(*) AS n FROM pragma_table_info('records') WHERE name = 'event_seq'").get() as { n: number };
      if (fresh.n > 0 && columns.n === 0) throw new Error('it was written by an older Archon, whose records do not name the event they hold');
      const schema = db;
      if (!schema.readonly) schema.transaction(() => schema.exec(SCHEMA)).immediate();
      return new AuditLog(db, secrets, existed, fresh.n === 0 || triggers.n === 2);
    } catch (error) {
      db?.close();
      throw new ArchonError('STORE_CORRUPT', `${file} cannot be opened (${(error as Error).message}). Keep it for inspection; \`archon audit reset --acknowledge "<reason>"\` sets it aside and starts a new chain.`, { cause: error });
    }
  }

  private sign(hash: string): string {
    if (!this.hmacKey) throw new ArchonError('AUDIT_RESET_REQUIRED', `The auditor's key ${this.secrets.keyFile} is missing.`);
    return createHmac('sha256', this.hmacKey).update(hash).digest('hex');
  }

  /** The last run-event seq recorded for each run: where the auditor goes on from. */
  cursors(): Map<string, number> {
    const rows = this.db.prepare('SELECT run_id, MAX(event_seq) AS seq FROM records WHERE run_id IS NOT NULL AND event_seq IS NOT NULL GROUP BY run_id').all() as { run_id: string; seq: number }[];
    return new Map(rows.map((row) => [row.run_id, row.seq]));
  }

  /** The runs whose deletion by Archon the log has recorded. */
  deletedRuns(): Set<string> {
    const rows = this.db.prepare(`SELECT run_id FROM records WHERE type = '${RUN_DELETED_TYPE}'`).all() as { run_id: string }[];
    return new Set(rows.map((row) => row.run_id));
  }

  /** The last run-event seq recorded for a run, or with no run, the last emergency stop's id. */
  cursorOf(runId: string | null): number {
    const row = (runId === null
      ? this.db.prepare('SELECT MAX(event_seq) AS seq FROM records WHERE run_id IS NULL AND event_seq IS NOT NULL').get()
      : this.db.prepare('SELECT MAX(event_seq) AS seq FROM records WHERE run_id = ?').get(runId)) as { seq: number | null };
    return row.seq ?? 0;
  }

  /**
   * Appends entries in one transaction and returns how many were new. Several auditors may share a
   * data dir: under the write lock each run (and the emergency stops) goes on only from its last
   * recorded seq, so an event is never recorded twice nor out of order.
   */
  append(entries: readonly AuditEntry[]): number {
    this.insert ??= this.db.prepare('INSERT INTO records (seq, ts, run_id, event_seq, type, canonical_json, prev_hash, hash, hmac) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)');
    const insert = this.insert;
    const appended = this.db.transaction(() => {
      let { seq, hash } = this.lastRecord();
      const cursors = new Map<string | null, number>();
      const deleted = entries.some((entry) => entry.type === RUN_DELETED_TYPE) ? this.deletedRuns() : new Set<string>();
      let count = 0;
      for (const entry of entries) {
        if (entry.type === RUN_DELETED_TYPE && entry.runId !== null) {
          if (deleted.has(entry.runId)) continue;
          deleted.add(entry.runId);
        }
        if (entry.eventSeq !== null) {
          const cursor = cursors.get(entry.runId) ?? this.cursorOf(entry.runId);
          cursors.set(entry.runId, cursor);
          if (entry.runId === null ? entry.eventSeq <= cursor : entry.eventSeq !== cursor + 1) continue;
          cursors.set(entry.runId, entry.eventSeq);
        }
        seq++;
        const record = { seq, ts: entry.ts, run_id: entry.runId, event_seq: entry.eventSeq, type: entry.type, canonical_json: canonicalJson(entry.body) };
        const next = hashOf(hash, record);
        insert.run(record.seq, record.ts, record.run_id, record.event_seq, record.type, record.canonical_json, hash, next, this.sign(next));
        hash = next;
        count++;
      }
      return count;
    }).immediate();
    if (appended > 0) this.signHead();
    return appended;
  }

  /**
   * Signs the head at the last committed record, then raises the anchor to it; the write lock keeps a
   * slower process from signing an older one. A crash between the two leaves the anchor behind the head.
   * The first anchor is written before the head, so an anchored head never stands without one.
   */
  signHead(): void {
    this.db.transaction(() => this.writeHead(this.lastRecord())).immediate();
  }

  private writeHead(last: { seq: number; hash: string }): void {
    const anchor = readStoredHead(this.secrets.anchorFile);
    if (!anchor) this.writeAnchor(last);
    writeAtomically(this.secrets.headFile, JSON.stringify({ ...last, anchored: true, hmac: this.sign(headMessage({ ...last, anchored: true })) }));
    if (anchor && last.seq > anchor.seq) this.writeAnchor(last);
  }

  /** Only a reset lowers the anchor: the new chain starts from nothing (its first record quotes the old anchor). */
  restartAnchor(): void {
    this.writeAnchor({ seq: 0, hash: GENESIS });
  }

  /** Whether the head was signed by an auditor that keeps the anchor (a log from before the anchor gets one on start). */
  anchored(): boolean {
    return readStoredHead(this.secrets.headFile)?.anchored === true && existsSync(this.secrets.anchorFile);
  }

  private writeAnchor(anchor: { seq: number; hash: string }): void {
    writeAtomically(this.secrets.anchorFile, JSON.stringify({ seq: anchor.seq, hash: anchor.hash, hmac: this.sign(anchorMessage(anchor)) }));
  }

  private lastRecord(): { seq: number; hash: string } {
    const last = this.db.prepare('SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1').get() as { seq: number; hash: string } | undefined;
    return last ?? { seq: 0, hash: GENESIS };
  }

  /** Thresholds the operator set (audit.db is the auditor's; no agent reads it). */
  thresholdOverrides(): Record<string, number> {
    const rows = this.db.prepare('SELECT name, value FROM thresholds').all() as { name: string; value: number }[];
    return Object.fromEntries(rows.map((row) => [row.name, row.value]));
  }

  setThreshold(name: string, value: number): void {
    this.db.prepare('INSERT INTO thresholds (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value').run(name, value);
  }

  records(filter: { runId?: string; since?: string } = {}): AuditRecord[] {
    const rows = filter.runId
      ? this.db.prepare('SELECT * FROM records WHERE run_id = ? ORDER BY seq').all(filter.runId)
      : this.db.prepare('SELECT * FROM records WHERE ts >= ? ORDER BY seq').all(filter.since ?? '');
    return rows.map((row) => AuditRecordSchema.parse(row));
  }

  recordCount(): number {
    return (this.db.prepare('SELECT count(*) AS n FROM records').get() as { n: number }).n;
  }

  hasHead(): boolean {
    return existsSync(this.secrets.headFile);
  }

  /**
   * What stops the log from being vouched for, found without reading every record: a missing key,
   * a missing, empty or older audit.db than its signed head, a head that was forged or removed.
   * Only `archon audit reset --acknowledge` gets past these.
   */
  headProblem(): { problem: string; seq: number | null } | null {
    const records = this.recordCount();
    const head = readStoredHead(this.secrets.headFile);
    if (!this.hmacKey) {
      if (records > 0) return { problem: `the auditor's key for this data dir is missing (${this.secrets.keyFile}) but audit.db holds ${records} records: they cannot be verified`, seq: null };
      return head ? { problem: `the auditor's key for this data dir is missing (${this.secrets.keyFile}) but its signed head is still there`, seq: null } : null;
    }
    if (!head) {
      if (records > 0) return { problem: `the signed head of the log is missing (${this.secrets.headFile})`, seq: null };
      const anchor = readStoredHead(this.secrets.anchorFile);
      return anchor && anchor.seq > 0 ? { problem: `audit.db and its signed head are gone while the anchor says ${anchor.seq} records were written`, seq: 1 } : null;
    }
    if (head.hmac !== this.sign(headMessage(head))) return { problem: 'the signed head of the log was altered', seq: null };
    const last = this.lastRecord();
    if (head.seq > 0 && records === 0) {
      return { problem: `audit.db is ${this.existed ? 'empty' : 'missing'}, but its signed head says ${head.seq} records were written`, seq: 1 };
    }
    if (head.seq > last.seq) {
      return { problem: `audit.db is older than its signed head: it ends at record ${last.seq} but ${head.seq} were written (the end was cut off, or an older copy was restored)`, seq: last.seq + 1 };
    }
    const atHead = this.db.prepare('SELECT hash FROM records WHERE seq = ?').get(head.seq) as { hash: string } | undefined;
    if (head.seq > 0 && atHead?.hash !== head.hash) return { problem: `record ${head.seq} does not match the signed head: audit.db was replaced or rewritten`, seq: head.seq };
    return this.anchorProblem(head, last);
  }

  /** A log or head older than the anchor: the pair was rolled back to an older copy. */
  private anchorProblem(head: SignedHead, last: { seq: number }): { problem: string; seq: number | null } | null {
    const anchor = readStoredHead(this.secrets.anchorFile);
    if (!anchor) return head.anchored ? { problem: `the anchor of the log (${this.secrets.anchorFile}) was removed, though its signed head was written beside it`, seq: null } : null;
    if (anchor.hmac !== this.sign(anchorMessage(anchor))) return { problem: `the anchor of the log (${this.secrets.anchorFile}) was altered`, seq: null };
    if (last.seq < anchor.seq) return { problem: `audit.db was rolled back to record ${last.seq} while the anchor says ${anchor.seq} records were written (an older copy of the log${head.seq < anchor.seq ? ' and its signed head' : ''} was restored, or its end was cut off)`, seq: last.seq + 1 };
    if (head.anchored && head.seq < anchor.seq) return { problem: `the signed head was rolled back to record ${head.seq} while the anchor says ${anchor.seq} records were written`, seq: head.seq + 1 };
    const atAnchor = this.db.prepare('SELECT hash FROM records WHERE seq = ?').get(anchor.seq) as { hash: string } | undefined;
    if (anchor.seq > 0 && atAnchor?.hash !== anchor.hash) return { problem: `record ${anchor.seq} does not match the anchor: audit.db was replaced or rewritten`, seq: anchor.seq };
    return null;
  }

  /** Recomputes the chain, every HMAC and the signed head; names the first record that does not hold. */
  verify(): VerifyResult {
    const rows = this.db.prepare('SELECT * FROM records ORDER BY rowid').all().map((row) => AuditRecordSchema.parse(row));
    const broken = (problem: string, seq: number | null): VerifyResult => ({ intact: false, records: rows.length, problem, seq });
    if (this.hmacKey) {
      let previous = { seq: 0, hash: GENESIS };
      for (const row of rows) {
        if (row.seq !== previous.seq + 1) {
          return broken(row.seq <= previous.seq ? `record ${row.seq} is out of order (after record ${previous.seq}): records were reordered or inserted` : `records ${previous.seq + 1}–${row.seq - 1} are missing: deleted`, previous.seq + 1);
        }
        if (row.prev_hash !== previous.hash) return broken(`record ${row.seq} does not follow record ${previous.seq} (its previous-hash does not match): inserted, reordered or altered`, row.seq);
        const expected = hashOf(row.prev_hash, row);
        if (row.hash !== expected) return broken(`record ${row.seq} was altered: its content does not match its hash`, row.seq);
        const mac = Buffer.from(row.hmac, 'hex');
        const expectedMac = Buffer.from(this.sign(row.hash), 'hex');
        if (mac.length !== expectedMac.length || !timingSafeEqual(mac, expectedMac)) return broken(`record ${row.seq} has an HMAC that does not match: it was rewritten without the key`, row.seq);
        previous = { seq: row.seq, hash: row.hash };
      }
    }
    const problem = this.headProblem();
    if (problem) return broken(problem.problem, problem.seq);
    if (!this.triggersFound) return broken('the append-only triggers were dropped', null);
    return { intact: true, records: rows.length };
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
