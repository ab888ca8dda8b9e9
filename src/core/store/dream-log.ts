import type { SqliteDatabase } from './open-database';

/** Which finished runs the Dreamer has learned from (MM-11): a run is dreamt once. */
export class DreamLog {
  constructor(
    private readonly db: SqliteDatabase,
    private readonly durably: <T>(write: () => T) => T,
  ) {}

  /** Goal runs in one of `statuses` not dreamt yet, oldest first; a run started without memory (`--no-memory`) is never learned from, nor a dream. */
  undreamt(statuses: ReadonlySet<string>, limit: number): string[] {
    const marks = [...statuses].map(() => '?').join(', ');
    const rows = this.db
      .prepare(
        `SELECT id FROM runs WHERE kind = 'goal' AND status IN (${marks}) AND COALESCE(json_extract(options_json, '$.memory'), 1) = 1 AND id NOT IN (SELECT run_id FROM dreams) ORDER BY created_at, rowid LIMIT ?`,
      )
      .all(...statuses, limit) as { id: string }[];
    return rows.map((row) => row.id);
  }

  /** Marks runs dreamt, with what was stored for them, after (or in the same transaction as) the lessons. */
  record(runIds: readonly string[], lessons: number, now: string, alsoWrite: () => void = () => {}): void {
    this.durably(() => {
      alsoWrite();
      const insert = this.db.prepare('INSERT OR IGNORE INTO dreams (run_id, dreamt_at, lessons) VALUES (?, ?, ?)');
      for (const runId of runIds) insert.run(runId, now, lessons);
    });
  }
}
