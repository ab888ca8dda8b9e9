import { createHmac, createSecretKey, hash as digest, timingSafeEqual, type KeyObject } from 'node:crypto';
import { chmodSync, closeSync, existsSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { canonicalJson } from '../shared/canonical-json';
import { parseJsonOrUndefined } from '../shared/json';
import { ArchonError } from '../shared/errors';
import type { VerifyResult } from '../shared/schemas/audit';
import type { ArchonEvent } from '../shared/schemas/events';
import type { AuditSecrets } from './audit-key';

export const AUDIT_DB_FILE = 'audit.db';
const GENESIS = '0'.repeat(64);

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS records (
    seq INTEGER PRIMARY KEY,
    ts TEXT NOT NULL,
    run_id TEXT,
    type TEXT NOT NULL,
    canonical_json TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL,
    hmac TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS records_run ON records (run_id);
  CREATE TABLE IF NOT EXISTS thresholds (name TEXT PRIMARY KEY, value REAL NOT NULL);
  CREATE TRIGGER IF NOT EXISTS records_no_update BEFORE UPDATE ON records BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
  CREATE TRIGGER IF NOT EXISTS records_no_delete BEFORE DELETE ON records BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
`;

export const AuditRecordSchema = z.object({
  seq: z.int().positive(),
  ts: z.string(),
  run_id: z.string().nullable(),
  type: z.string(),
  canonical_json: z.string(),
  prev_hash: z.string(),
  hash: z.string(),
  hmac: z.string(),
});
export type AuditRecord = z.infer<typeof AuditRecordSchema>;

const HeadSchema = z.object({ seq: z.int().nonnegative(), hash: z.string(), hmac: z.string() });


/** A record's hash covers every column but its own hash and HMAC, chained to the previous hash. */
function hashOf(prevHash: string, record: Pick<AuditRecord, 'seq' | 'ts' | 'run_id' | 'type' | 'canonical_json'>): string {
  return digest('sha256', `${prevHash}\n${record.seq}\n${record.ts}\n${record.run_id ?? ''}\n${record.type}\n${record.canonical_json}`);
}

/**
 * audit.db: the auditor's own append-only, hash-chained log. Each record holds its canonical JSON,
 * the previous record's hash, its own SHA-256 and an HMAC under a key kept outside the data dir;
 * the signed head of the chain is kept beside the key, so a cut-off tail is caught too. Records are
 * written in batches, each committed with synchronous=FULL.
 */
export class AuditLog {
  private pending: ArchonEvent[] = [];
  private flushScheduled = false;

  private constructor(
    private readonly db: Database.Database,
    private readonly secrets: AuditSecrets,
    /** Whether the append-only triggers were in place when the file was opened. */
    private readonly triggersFound: boolean,
  ) {
    this.hmacKey = createSecretKey(secrets.key);
  }

  static open(dataDir: string, secrets: AuditSecrets): AuditLog {
    const file = join(dataDir, AUDIT_DB_FILE);
    // 0600 before SQLite opens it: its -wal and -shm files take the database file's mode.
    closeSync(openSync(file, 'a', 0o600));
    for (const path of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(path)) chmodSync(path, 0o600);
    const db = new Database(file, { timeout: 5000 });
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      const fresh = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'records'").get() as { n: number };
      const triggers = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'records'").get() as { n: number };
      db.exec(SCHEMA);
      return new AuditLog(db, secrets, fresh.n === 0 || triggers.n === 2);
    } catch (error) {
      db.close();
      throw new ArchonError('STORE_CORRUPT', `${join(dataDir, AUDIT_DB_FILE)} cannot be opened (${(error as Error).message}). Keep it for inspection and run \`archon audit verify\`.`, { cause: error });
    }
  }

  private readonly hmacKey: KeyObject;

  private sign(hash: string): string {
    return createHmac('sha256', this.hmacKey).update(hash).digest('hex');
  }

  record(event: ArchonEvent): void {
    this.pending.push(event);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  flush(): void {
    this.flushScheduled = false;
    if (this.pending.length === 0 || !this.db.open) return;
    const batch = this.pending;
    this.pending = [];
    const insert = this.db.prepare('INSERT INTO records (seq, ts, run_id, type, canonical_json, prev_hash, hash, hmac) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    // Several processes may share the data dir: the head is read under the write lock, and the
    // signed head written before it is released.
    this.db.transaction(() => {
      let { seq, hash } = this.lastRecord();
      for (const event of batch) {
        seq++;
        const record = { seq, ts: event.ts, run_id: 'runId' in event ? event.runId : null, type: event.type, canonical_json: canonicalJson(event) };
        const next = hashOf(hash, record);
        insert.run(record.seq, record.ts, record.run_id, record.type, record.canonical_json, hash, next, this.sign(next));
        hash = next;
      }
      this.writeHead({ seq, hash });
    }).immediate();
  }

  private lastRecord(): { seq: number; hash: string } {
    const last = this.db.prepare('SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1').get() as { seq: number; hash: string } | undefined;
    return last ?? { seq: 0, hash: GENESIS };
  }

  private writeHead(head: { seq: number; hash: string }): void {
    const temporary = `${this.secrets.headFile}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify({ ...head, hmac: this.sign(`${head.seq}:${head.hash}`) }), { mode: 0o600 });
    renameSync(temporary, this.secrets.headFile);
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

  /** Recomputes the chain, every HMAC and the signed head; names the first record that does not hold. */
  verify(): VerifyResult {
    this.flush();
    const rows = this.db.prepare('SELECT * FROM records ORDER BY rowid').all().map((row) => AuditRecordSchema.parse(row));
    const broken = (problem: string, seq: number | null): VerifyResult => ({ intact: false, records: rows.length, problem, seq });
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
    const head = this.readHead();
    if (head === 'unsigned') return broken('the signed head of the log was altered', null);
    if (head && (head.seq !== previous.seq || head.hash !== previous.hash)) {
      return broken(head.seq > previous.seq ? `the log ends at record ${previous.seq} but ${head.seq} were written: the end was cut off` : `the log has records past its signed head (${head.seq}): appended without the auditor`, Math.min(head.seq, previous.seq) + 1);
    }
    if (!this.triggersFound) return broken('the append-only triggers were dropped', null);
    return { intact: true, records: rows.length };
  }

  private readHead(): { seq: number; hash: string } | 'unsigned' | null {
    if (!existsSync(this.secrets.headFile)) return null;
    const parsed = HeadSchema.safeParse(parseJsonOrUndefined(readFileSync(this.secrets.headFile, 'utf8')));
    if (!parsed.success || parsed.data.hmac !== this.sign(`${parsed.data.seq}:${parsed.data.hash}`)) return 'unsigned';
    return parsed.data;
  }

  close(): void {
    this.flush();
    if (this.db.open) this.db.close();
  }
}
