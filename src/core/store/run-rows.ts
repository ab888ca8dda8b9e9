import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ArchonError } from '../../shared/errors';
import type { RunEvent } from '../../shared/schemas/events';
import { writeTransaction, type SqliteDatabase } from './open-database';

/**
 * Each table that holds a run's state, with the columns that name one of its rows within its run. A
 * table numbered across runs (`numbered`) is not carried with its numbers: its rows get new ones where
 * they land, in the same order; one with no key of its own is named by its place in its run (those
 * tables only grow). The top run's events travel on their own (`adopt`); its sub-agents' as rows.
 * What belongs to one machine is not carried: a run's lease and the process groups of its tools.
 */
const RUN_TABLES = {
  runs: { key: [], runColumn: 'id' },
  steps: { key: ['id'] },
  model_calls: { key: ['id'] },
  tool_calls: { key: ['id'] },
  approvals: { key: ['id'] },
  budget_ledger: { key: [], numbered: 'id' },
  step_turns: { key: ['step_id', 'attempt', 'position'] },
  step_compactions: { key: ['step_id', 'attempt', 'through'] },
  run_facts: { key: ['key'] },
  file_effects: { key: [], numbered: 'seq' },
  bus_messages: { key: ['id'], numbered: 'seq' },
  events: { key: ['seq'], subAgentsOnly: true },
} as const satisfies Record<string, TableSpec>;

interface TableSpec {
  key: readonly string[];
  /** The column naming the run, when it is not `run_id`. */
  runColumn?: string;
  numbered?: string;
  subAgentsOnly?: boolean;
}

type RunTable = keyof typeof RUN_TABLES;
const TABLES = Object.keys(RUN_TABLES) as RunTable[];
const specOf = (table: RunTable): TableSpec => RUN_TABLES[table];
/** Columns of `runs` that are this machine's: its lease, a stop asked of the process driving it, and the workspace's device and inode (pinned again where the run goes on). */
const LOCAL_RUN_COLUMNS = new Set(['lease_pid', 'lease_heartbeat_ms', 'control_json', 'workspace_real', 'workspace_dev', 'workspace_ino']);
const RUN_TREE = "WITH RECURSIVE tree(id) AS (SELECT ? UNION SELECT runs.id FROM runs JOIN tree ON json_extract(runs.options_json, '$.parentRunId') = tree.id)";

const CellSchema = z.union([z.string(), z.number(), z.null(), z.object({ base64: z.string() }).strict()]);
export const RunRowSchema = z.object({ table: z.enum(TABLES), key: z.string().min(1), place: z.int().nonnegative(), values: z.record(z.string(), CellSchema) }).strict();
/** One row of a run's state, as it travels: its table, its name, its place in its run's order where that order is kept (0 elsewhere: a row keeps its digest as others come), its columns (bytes as base64). */
export type RunRow = z.infer<typeof RunRowSchema>;

const cellOf = (value: unknown): z.infer<typeof CellSchema> => (Buffer.isBuffer(value) ? { base64: value.toString('base64') } : (value as string | number | null));
const valueOf = (cell: z.infer<typeof CellSchema>): unknown => (cell !== null && typeof cell === 'object' ? Buffer.from(cell.base64, 'base64') : cell);

function carried(table: RunTable, column: string): boolean {
  return column !== specOf(table).numbered && !(table === 'runs' && LOCAL_RUN_COLUMNS.has(column));
}

/** A digest of a row as it stands: a row sent once is sent again only when it changed. */
export function rowDigest(row: RunRow): string {
  return createHash('sha256').update(JSON.stringify(row)).digest('base64url');
}

/**
 * A run's state as rows, to be carried to another data dir where the run goes on: every table that
 * holds it or its sub-agents' runs, read together (so the rows agree with each other), each row named
 * within its run.
 */
export class RunRows {
  constructor(
    private readonly db: SqliteDatabase,
    private readonly durably: <T>(write: () => T) => T,
  ) {}

  /** The run's rows as they stand now (none when there is no such run): read in one synchronous go, between two of the run's own writes, which come from this process only. */
  read(runId: string): RunRow[] {
    return TABLES.flatMap((table) => this.tableRows(table, runId));
  }

  private tableRows(table: RunTable, runId: string): RunRow[] {
    const spec = specOf(table);
    const runColumn = spec.runColumn ?? 'run_id';
    const order = [runColumn, spec.numbered ?? (spec.key.length > 0 ? spec.key.join(', ') : 'rowid')].join(', ');
    const rows = this.db.prepare(`${RUN_TREE} SELECT * FROM ${table} WHERE ${runColumn} IN (SELECT id FROM tree)${spec.subAgentsOnly ? ` AND ${runColumn} <> ?` : ''} ORDER BY ${order}`).all(...(spec.subAgentsOnly ? [runId, runId] : [runId])) as Record<string, unknown>[];
    const places = new Map<string, number>();
    const ordered = spec.numbered !== undefined || spec.key.length === 0;
    return rows.map((row) => {
      const run = String(row[runColumn]);
      const place = ordered ? (places.get(run) ?? 0) + 1 : 0;
      places.set(run, place);
      const name = spec.key.length === 0 ? [String(place)] : spec.key.map((column) => String(row[column]));
      const values = Object.fromEntries(Object.entries(row).filter(([column]) => carried(table, column)).map(([column, value]) => [column, cellOf(value)]));
      return { table, key: [table, run, ...name].join('/'), place, values };
    });
  }

  /**
   * Takes in a run another data dir began, as it stood there: its rows (its sub-agents' runs with it)
   * and its events, in one durable transaction. A run this data dir already holds is not overwritten
   * (its own record of it may be newer).
   */
  adopt(runId: string, rows: readonly RunRow[], events: readonly RunEvent[]): void {
    const runs = new Set(rows.filter((row) => row.table === 'runs').map((row) => String(row.values.id)));
    if (!runs.has(runId)) throw new ArchonError('CONFIG_INVALID', `The rows sent for run ${runId} do not hold the run itself; nothing was taken in.`);
    this.durably(() =>
      writeTransaction(this.db, () => {
        const here = [...runs].find((id) => this.db.prepare('SELECT 1 FROM runs WHERE id = ?').get(id) !== undefined);
        if (here !== undefined) throw new ArchonError('CONFIG_INVALID', `Run ${here} is already on this data dir; it was not taken in again over its own record.`);
        for (const table of TABLES) {
          const known = new Set((this.db.prepare(`SELECT name FROM pragma_table_info('${table}')`).all() as { name: string }[]).map((column) => column.name));
          const ofTable = rows.filter((row) => row.table === table);
          for (const row of ofTable.sort((a, b) => a.place - b.place)) this.insert(table, known, runs, row);
        }
        const insert = this.db.prepare('INSERT INTO events (run_id, seq, type, ts, body_json) VALUES (?, ?, ?, ?, ?)');
        for (const event of events) insert.run(runId, event.seq, event.type, event.ts, JSON.stringify(event));
      }),
    );
  }

  /** One row into `table`, whose columns are `known`: only those this Archon carries, of a run sent with it. */
  private insert(table: RunTable, known: ReadonlySet<string>, runs: ReadonlySet<string>, row: RunRow): void {
    const columns = Object.keys(row.values);
    const unknown = columns.find((column) => !known.has(column) || !carried(table, column));
    if (unknown !== undefined) throw new ArchonError('CONFIG_INVALID', `A run's ${table} came with a column ${unknown} this Archon does not carry: update Archon on this worker to the version that began the run.`);
    const run = row.values[specOf(table).runColumn ?? 'run_id'];
    if (typeof run !== 'string' || !runs.has(run)) throw new ArchonError('CONFIG_INVALID', `A row of ${table} names a run (${String(run)}) that was not sent with it; nothing was taken in.`);
    this.db.prepare(`INSERT INTO ${table} (${columns.map((column) => `"${column}"`).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`).run(...columns.map((column) => valueOf(row.values[column] ?? null)));
  }
}
