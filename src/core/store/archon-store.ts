import { join } from 'node:path';
import { z } from 'zod';
import type { RunEvent } from '../../shared/schemas/events';
import { EstopStateSchema, type EstopState, type EstopTrigger } from '../../shared/schemas/estop';
import { DEFAULT_SETTINGS, SettingsSchema, type Settings, type SettingsPatch } from '../../shared/schemas/settings';
import { parseJsonOrUndefined } from '../../shared/json';
import { ArchonError, describeZodError } from '../../shared/errors';
import { MIGRATIONS } from './migrations';
import { openDatabase, writeTransaction, type SqliteDatabase } from './open-database';
import { RunStore } from './run-store';
import { SecretRedactor } from '../secrets/redactor';
import { ToolDefinitionStore } from './tool-definitions';
import { MemoryStore } from '../memory/memory-store';
import { DreamLog } from './dream-log';
import { WalSync, type DurableWrites } from './wal-sync';

export const ARCHON_DB_FILE = 'archon.db';

const EstopRowSchema = z.object({
  action: z.enum(['trigger', 'reset']),
  triggered_by: z.string().nullable(),
  reason: z.string().nullable(),
  ts: z.string(),
});


/**
 * archon.db: the runtime's own state. Writes that a person relies on (approvals, emergency stops,
 * the budget ledger) are on disk before anything acts on them (`durable`); the rest use WAL's
 * NORMAL, which survives a process crash.
 */
export class ArchonStore {
  readonly runs: RunStore;
  readonly toolDefinitions: ToolDefinitionStore;
  /** Long-term memory, bounded by the memoryMaxItems setting. */
  readonly memory: MemoryStore;
  readonly dreams: DreamLog;
  /** Known secrets, blanked out of everything written here (and of events, by the event log). */
  readonly secrets = new SecretRedactor();

  readonly durable: DurableWrites = { now: (write) => this.durably(write), grouped: (write) => this.durablyGrouped(write) };
  private readonly walSync: WalSync;

  private constructor(
    readonly db: SqliteDatabase,
    readonly file: string,
  ) {
    this.walSync = new WalSync(`${file}-wal`);
    this.runs = new RunStore(db, this.durable, this.secrets);
    this.toolDefinitions = new ToolDefinitionStore(db);
    this.memory = new MemoryStore(db, this.secrets, { maxItems: () => this.getSetting('memoryMaxItems') });
    this.dreams = new DreamLog(db, this.durable.now);
  }

  static open(dataDir: string): ArchonStore {
    const file = join(dataDir, ARCHON_DB_FILE);
    return new ArchonStore(openDatabase(file, { migrations: MIGRATIONS }), file);
  }

  close(): void {
    this.walSync.close();
    if (this.db.open) this.db.close();
  }

  private durably<T>(write: () => T): T {
    this.db.pragma('synchronous = FULL');
    try {
      // IMMEDIATE: the write lock is taken (waiting out the busy timeout) before anything is read, so two processes never deadlock upgrading.
      return writeTransaction(this.db, write);
    } finally {
      this.db.pragma('synchronous = NORMAL');
    }
  }

  private durablyGrouped<T>(write: () => T): Promise<T> {
    const value = writeTransaction(this.db, write);
    return this.walSync.sync().then(() => value);
  }

  estopState(): EstopState {
    const row = this.db.prepare('SELECT action, triggered_by, reason, ts FROM estops ORDER BY id DESC LIMIT 1').get();
    if (row === undefined) return { latched: false, since: null, triggeredBy: null, reason: null };
    const last = EstopRowSchema.parse(row);
    return EstopStateSchema.parse({
      latched: last.action === 'trigger',
      since: last.ts,
      triggeredBy: last.action === 'trigger' ? last.triggered_by : null,
      reason: last.reason,
    });
  }

  /** Latches (or re-arms) the emergency stop durably; returns the state every process will now see. */
  recordEstop(action: 'trigger' | 'reset', triggeredBy: EstopTrigger | null, reason: string, ts: string): EstopState {
    this.durably(() => {
      this.db
        .prepare('INSERT INTO estops (action, triggered_by, reason, ts) VALUES (?, ?, ?, ?)')
        .run(action, triggeredBy, reason, ts);
    });
    return this.estopState();
  }

  private storedSettings(): { key: string; value_json: string }[] {
    return this.db.prepare('SELECT key, value_json FROM settings').all() as { key: string; value_json: string }[];
  }

  /** The settings to show and edit: a stored value that does not parse shows its default (and `settingsForRun` refuses it). */
  getSettings(): Settings {
    const stored: Record<string, unknown> = {};
    for (const row of this.storedSettings()) stored[row.key] = parseJsonOrUndefined(row.value_json);
    const merged = { ...DEFAULT_SETTINGS };
    for (const key of Object.keys(DEFAULT_SETTINGS) as (keyof Settings)[]) {
      const candidate = SettingsSchema.shape[key].safeParse(stored[key]);
      if (candidate.success) Object.assign(merged, { [key]: candidate.data });
    }
    return merged;
  }

  /** One setting, as `getSettings` would give it, without reading and parsing the others (asked on hot paths). */
  getSetting<K extends keyof Settings>(key: K): Settings[K] {
    const row = this.db.prepare('SELECT value_json FROM settings WHERE key = ?').get(key) as { value_json: string } | undefined;
    const candidate = SettingsSchema.shape[key].safeParse(row === undefined ? undefined : parseJsonOrUndefined(row.value_json));
    return candidate.success ? (candidate.data as Settings[K]) : DEFAULT_SETTINGS[key];
  }

  /** The settings a run starts under: a stored value that does not parse refuses the run instead of falling back to a default that may be less safe. */
  settingsForRun(): Settings {
    for (const row of this.storedSettings()) {
      const schema = SettingsSchema.shape[row.key as keyof Settings] as z.ZodType | undefined;
      if (!schema) continue;
      const parsed = schema.safeParse(parseJsonOrUndefined(row.value_json));
      if (!parsed.success) {
        throw new ArchonError(
          'CONFIG_INVALID',
          `The stored setting "${row.key}" has an invalid value ${JSON.stringify(row.value_json.slice(0, 200))} (${describeZodError(parsed.error)}). ` +
            `No run starts until it is fixed: set it again in Settings, or remove it to use its default (sqlite3 "${this.file}" "DELETE FROM settings WHERE key = '${row.key}'").`,
        );
      }
    }
    return this.getSettings();
  }

  updateSettings(patch: SettingsPatch): Settings {
    const upsert = this.db.prepare(
      'INSERT INTO settings (key, value_json) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value_json = excluded.value_json',
    );
    const before = this.getSettings().toolApproval;
    writeTransaction(this.db, () => {
      for (const [key, value] of Object.entries(patch)) {
        if (value !== undefined) upsert.run(key, JSON.stringify(value));
      }
      if (patch.toolApproval) this.toolDefinitions.settingsChanged(changedKeys(before, patch.toolApproval));
    });
    return this.getSettings();
  }

  lastSeq(runId: string): number {
    const row = this.db.prepare('SELECT MAX(seq) AS seq FROM events WHERE run_id = ?').get(runId) as { seq: number | null };
    return row.seq ?? 0;
  }

  appendEvents(events: readonly RunEvent[]): void {
    const insert = this.db.prepare('INSERT INTO events (run_id, seq, type, ts, body_json) VALUES (?, ?, ?, ?, ?)');
    writeTransaction(this.db, () => {
      for (const event of events) insert.run(event.runId, event.seq, event.type, event.ts, JSON.stringify(event));
    });
  }
}

/** The per-tool approval settings a patch sets, changes or removes. */
function changedKeys(before: Settings['toolApproval'], after: Settings['toolApproval']): string[] {
  return [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((key) => before[key] !== after[key]);
}
