import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { parseJsonOrUndefined } from '../shared/json';
import { ENDED_RUN_STATUSES } from '../shared/schemas/run';
import { RUN_DELETED_TYPE, type AuditEntry } from './audit-log';

/** The runtime's database, as the auditor sees it: read-only, and only its events and emergency stops. */
const ARCHON_DB = 'archon.db';
export const ESTOP_TYPE = 'system.estop';
/** Runs that write no more events: every ended status but `paused`, whose run may resume at any time. */
const FINISHED = `(${[...ENDED_RUN_STATUSES].filter((status) => status !== 'paused').map((status) => `'${status}'`).join(', ')})`;

interface EstopRow {
  id: number;
  action: 'trigger' | 'reset';
  triggered_by: string | null;
  reason: string | null;
  ts: string;
}

interface EventRow {
  run_id: string;
  seq: number;
  type: string;
  ts: string;
  body_json: string;
}

/**
 * Reads archon.db's `events` table read-only (the auditor never writes the runtime's state). A data
 * dir whose archon.db does not exist yet reads as one without events until it appears.
 */
export class ArchonEvents {
  private db: Database.Database | null = null;
  private lastVersion = -1;

  constructor(private readonly dataDir: string) {}

  private open(): Database.Database | null {
    const file = join(this.dataDir, ARCHON_DB);
    if (!this.db && existsSync(file)) {
      const db = new Database(file, { readonly: true, fileMustExist: true, timeout: 5000 });
      const hasEvents = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'events'").get() as { n: number };
      if (hasEvents.n === 0) db.close();
      else this.db = db;
    }
    return this.db;
  }

  /** Whether archon.db exists and holds events (a data dir with only audit.db has nothing to compare the log with). */
  present(): boolean {
    return this.open() !== null;
  }

  /** Whether another connection committed since the last call (cheap: SQLite's data_version). */
  changed(): boolean {
    const db = this.open();
    if (!db) return false;
    const version = db.pragma('data_version', { simple: true }) as number;
    const changed = version !== this.lastVersion;
    this.lastVersion = version;
    return changed;
  }

  /** The last seq of every run's events. */
  lastSeqs(): Map<string, number> {
    const rows = (this.open()?.prepare('SELECT run_id, MAX(seq) AS seq FROM events GROUP BY run_id').all() ?? []) as { run_id: string; seq: number }[];
    return new Map(rows.map((row) => [row.run_id, row.seq]));
  }

  /** Runs that may still be writing events. */
  unfinishedRuns(): string[] {
    const rows = (this.open()?.prepare(`SELECT id FROM runs WHERE status NOT IN ${FINISHED}`).all() ?? []) as { id: string }[];
    return rows.map((row) => row.id);
  }

  /** A run's events after `seq`, in order, stopping at the first gap (an event not committed yet). */
  eventsAfter(runId: string, seq: number, limit: number): AuditEntry[] {
    const rows = (this.open()?.prepare('SELECT run_id, seq, type, ts, body_json FROM events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?').all(runId, seq, limit) ?? []) as EventRow[];
    const entries: AuditEntry[] = [];
    for (const row of rows) {
      if (row.seq !== seq + entries.length + 1) break;
      entries.push({ runId: row.run_id, eventSeq: row.seq, type: row.type, ts: row.ts, body: parseJsonOrUndefined(row.body_json) ?? { unreadable: row.body_json } });
    }
    return entries;
  }

  /** Emergency stops and re-arms after `id`, as the `system.estop` events every host announced them. */
  estopsAfter(id: number, limit: number): AuditEntry[] {
    const rows = (this.open()?.prepare('SELECT id, action, triggered_by, reason, ts FROM estops WHERE id > ? ORDER BY id LIMIT ?').all(id, limit) ?? []) as EstopRow[];
    return rows.map((row) => {
      const state = { latched: row.action === 'trigger', since: row.ts, triggeredBy: row.action === 'trigger' ? row.triggered_by : null, reason: row.reason };
      return { runId: null, eventSeq: row.id, type: ESTOP_TYPE, ts: row.ts, body: { type: ESTOP_TYPE, ts: row.ts, state } };
    });
  }

  /** Runs Archon deleted (`runs.delete`), from the tombstones it leaves; none in an archon.db older than them. */
  deletions(): AuditEntry[] {
    const db = this.open();
    const hasTable = db?.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'run_deletions'").get() as { n: number } | undefined;
    if (!db || !hasTable?.n) return [];
    const rows = db.prepare('SELECT run_id, last_seq, ts FROM run_deletions ORDER BY id').all() as { run_id: string; last_seq: number; ts: string }[];
    return rows.map((row) => ({ runId: row.run_id, eventSeq: null, type: RUN_DELETED_TYPE, ts: row.ts, body: { type: RUN_DELETED_TYPE, ts: row.ts, runId: row.run_id, lastSeq: row.last_seq } }));
  }

  lastEstop(): number {
    const row = this.open()?.prepare('SELECT MAX(id) AS id FROM estops').get() as { id: number | null } | undefined;
    return row?.id ?? 0;
  }

  close(): void {
    this.db?.close();
    this.db = null;
  }
}
