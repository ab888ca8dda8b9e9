import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { ArchonError } from '../../shared/errors';
import { MemoryItemSchema, type MemoryItem, type MemoryKind, type MemorySource } from '../../shared/schemas/memory';
import { writeTransaction, type SqliteDatabase } from '../store/open-database';
import type { SecretRedactor } from '../secrets/redactor';
import { lexicalQuery } from './lexical-query';
import { fuseRankings, type RankedList } from './rank-fusion';
import { mergeForBound } from './bound-summary';

/** What a caller gives to store a memory; the store gives it an id, a time and redacts it. */
export interface NewMemoryItem {
  kind: MemoryKind;
  text: string;
  source?: MemorySource | null;
  evidence?: string[];
  appliesTo?: string | null;
  pinned?: boolean;
  /** Default: an item of no run (the operator's own) is global, any other is recalled in its runs' workspace only. */
  global?: boolean;
}

/** A step's result as a fact of its run (source run and step), kept once the run's outcome was accepted. */
export interface StepFact {
  stepId: string;
  text: string;
}

/** The query's embedding, for vector search among items embedded with the same model. */
export interface QueryEmbedding {
  model: string;
  vector: readonly number[];
}

export interface MemorySearchOptions {
  limit: number;
  kinds?: readonly MemoryKind[];
  embedding?: QueryEmbedding | null;
  /** Vector matches below this cosine similarity are left out (default MIN_SIMILARITY). */
  minSimilarity?: number;
  /** When neither search finds anything, the most recent items stand in (default true). */
  recentFallback?: boolean;
  /** Items that came from this run are left out. */
  excludeRunId?: string;
  /** Only global items, and items of this run's workspace whose runs (source and evidence) are all still known. */
  workspaceOfRun?: string;
}

export interface ScoredMemory {
  item: MemoryItem;
  /** The fused rank score: higher is more relevant. */
  score: number;
  /** Which retrievals found it; `recent` alone means neither search did (the fallback). */
  matchedBy: ('vector' | 'lexical' | 'recent')[];
}

export interface MemoryStoreOptions {
  /** Settings.memoryMaxItems: beyond it the least recently used unpinned items are summarised, then expire. */
  maxItems: () => number;
  now?: () => string;
}

export const MIN_SIMILARITY = 0.5;
/** How many items each retrieval proposes before fusion. */
const CANDIDATES = 50;
/** How many recent items stand in when neither search finds anything. */
const RECENT_FALLBACK = 3;
const MIN_ID_PREFIX = 4;
/** How many nearest quantised vectors are ranked again exactly. */
const COARSE_CANDIDATES = 200;
const MAX_DIMENSIONS = 8192;
/** Most recently used (or, never used, made) first. */
const RECENCY_ORDER = 'coalesce(m.last_used_at, m.created_at) DESC, m.seq DESC';

const RowSchema = z.object({
  seq: z.number(),
  id: z.string(),
  kind: z.string(),
  text: z.string(),
  source_run_id: z.string().nullable(),
  source_step_id: z.string().nullable(),
  evidence_json: z.string(),
  applies_to: z.string().nullable(),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  pinned: z.number(),
  workspace: z.string().nullable(),
  global: z.number(),
});
type Row = z.infer<typeof RowSchema>;

const COLUMNS = 'm.seq, m.id, m.kind, m.text, m.source_run_id, m.source_step_id, m.evidence_json, m.applies_to, m.created_at, m.last_used_at, m.pinned, m.workspace, m.global';

function toItem(row: unknown): MemoryItem {
  const r: Row = RowSchema.parse(row);
  return MemoryItemSchema.parse({
    id: r.id,
    kind: r.kind,
    text: r.text,
    source: r.source_run_id ? { runId: r.source_run_id, stepId: r.source_step_id } : null,
    evidence: JSON.parse(r.evidence_json),
    appliesTo: r.applies_to,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
    pinned: r.pinned === 1,
    workspace: r.workspace,
    global: r.global === 1,
  });
}

/** A run's workspace: its pinned real path, else the path it was given. */
const RUN_WORKSPACE = "coalesce(r.workspace_real, json_extract(r.options_json, '$.workspace'))";
const CURRENT_WORKSPACE = `(SELECT ${RUN_WORKSPACE} FROM runs r WHERE r.id = ?)`;

/**
 * What a run's steps found holds what was in its workspace (a secret a tool read included): an item
 * is recalled only by runs of its workspace, and one whose runs (source or evidence) are no longer
 * known by none. A global item (the operator's own, or one the operator made global) is recalled everywhere.
 */
const IN_WORKSPACE = `
  AND (m.global = 1 OR (
    m.workspace = ${CURRENT_WORKSPACE}
    AND (m.source_run_id IS NULL OR EXISTS (SELECT 1 FROM runs r WHERE r.id = m.source_run_id))
    AND NOT EXISTS (SELECT 1 FROM json_each(m.evidence_json) e WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = e.value))))`;

function itemFilter(kinds: readonly MemoryKind[] | undefined, excludeRunId?: string, workspaceOfRun?: string): { sql: string; params: string[] } {
  const byKind = !kinds || kinds.length === 0 ? { sql: '', params: [] } : { sql: ` AND m.kind IN (${kinds.map(() => '?').join(', ')})`, params: [...kinds] };
  const byRun = excludeRunId === undefined ? byKind : { sql: `${byKind.sql} AND m.source_run_id IS NOT ?`, params: [...byKind.params, excludeRunId] };
  return workspaceOfRun === undefined ? byRun : { sql: `${byRun.sql}${IN_WORKSPACE}`, params: [...byRun.params, workspaceOfRun] };
}

/** A summary of items keeps their workspace only when they share one, and is global only when they all were. */
function mergedScope(items: readonly MemoryItem[]): { workspace: string | null; global: boolean } {
  const workspaces = new Set(items.map((item) => item.workspace));
  const [only] = workspaces;
  return { workspace: workspaces.size === 1 && only !== undefined ? only : null, global: items.every((item) => item.global) };
}

function vectorBlob(vector: readonly number[]): Buffer {
  const floats = Float32Array.from(vector);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength);
}

/**
 * Long-term memory in archon.db: items with provenance, FTS5 over their text, and embeddings (any
 * dimension, one model's per item) compared with sqlite-vec. Secrets are redacted before a write.
 */
export class MemoryStore {
  private readonly now: () => string;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly secrets: SecretRedactor,
    private readonly options: MemoryStoreOptions,
  ) {
    this.now = options.now ?? (() => new Date().toISOString());
  }

  /** Inside a caller's transaction, a savepoint of it: a failure undoes this item alone. */
  add(input: NewMemoryItem): MemoryItem {
    const item = this.candidate(input);
    writeTransaction(this.db, () => {
      this.insert(item);
      this.enforceBound();
    });
    return item;
  }

  /**
   * A run's accepted step results, each kept once: a fact already stored for the same step with the
   * same text (the run's ending recorded again) stays as it is, with its pin and scope.
   */
  putStepFacts(runId: string, facts: readonly StepFact[]): MemoryItem[] {
    const existing = this.db.prepare("SELECT m.id FROM memory_items m WHERE m.kind = 'fact' AND m.source_run_id = ? AND m.source_step_id = ? AND m.text = ?");
    return writeTransaction(this.db, () =>
      facts.map((fact) => {
        const item = this.candidate({ kind: 'fact', text: fact.text, source: { runId, stepId: fact.stepId } });
        const kept = existing.get(runId, fact.stepId, item.text) as { id: string } | undefined;
        if (kept) return this.get(kept.id) as MemoryItem;
        this.insert(item);
        this.enforceBound();
        return item;
      }),
    );
  }

  /** The run's one episode: one it had from an earlier ending (a resumed run's) is replaced. */
  putEpisode(runId: string, text: string): MemoryItem {
    return writeTransaction(this.db, () => {
      this.db.prepare("DELETE FROM memory_items WHERE kind = 'episode' AND source_run_id = ?").run(runId);
      return this.add({ kind: 'episode', text, source: { runId, stepId: null } });
    });
  }

  get(id: string): MemoryItem | null {
    const row = this.db.prepare(`SELECT ${COLUMNS} FROM memory_items m WHERE m.id = ?`).get(id);
    return row === undefined ? null : toItem(row);
  }

  /** An item's full id from its id or a unique prefix; a clear error names what to do otherwise. */
  resolveId(reference: string): string {
    if (this.get(reference)) return reference;
    const matches = reference.length >= MIN_ID_PREFIX ? (this.db.prepare('SELECT id FROM memory_items WHERE substr(id, 1, ?) = ? LIMIT 2').all(reference.length, reference) as { id: string }[]) : [];
    if (matches.length === 1 && matches[0]) return matches[0].id;
    if (matches.length > 1) throw new ArchonError('VALIDATION_FAILED', `More than one memory starts with ${reference}; give more of its id (\`archon memory list\` shows them).`);
    throw new ArchonError('NOT_FOUND', `There is no memory ${reference}. See \`archon memory list\` or \`archon memory search "<query>"\` for the ids.`);
  }

  /** Newest first. */
  list(options: { kind?: MemoryKind; limit: number }): MemoryItem[] {
    const filter = itemFilter(options.kind ? [options.kind] : undefined);
    const rows = this.db.prepare(`SELECT ${COLUMNS} FROM memory_items m WHERE 1 = 1${filter.sql} ORDER BY m.seq DESC LIMIT ?`).all(...filter.params, options.limit);
    return rows.map(toItem);
  }

  count(): number {
    return (this.db.prepare('SELECT n FROM memory_count').get() as { n: number }).n;
  }

  /**
   * Vector and lexical matches fused by reciprocal rank, recency breaking near-ties; vector matches
   * under the similarity threshold are left out. Neither finding anything: the most recent items.
   */
  search(query: string, options: MemorySearchOptions): ScoredMemory[] {
    const rankings: RankedList[] = [];
    const filter = itemFilter(options.kinds, options.excludeRunId, options.workspaceOfRun);
    const vector = options.embedding ? this.vectorMatches(options.embedding, filter, options.minSimilarity ?? MIN_SIMILARITY) : [];
    if (vector.length > 0) rankings.push({ name: 'vector', ids: vector });
    const lexical = this.lexicalMatches(query, filter);
    if (lexical.length > 0) rankings.push({ name: 'lexical', ids: lexical });
    const found = new Set(rankings.flatMap((ranking) => ranking.ids));
    const fallback = options.recentFallback ?? true;
    const recent = found.size > 0 ? this.byRecency([...found]) : fallback ? this.recent(filter, RECENT_FALLBACK) : [];
    const fused = fuseRankings(rankings, { name: 'recent', ids: recent }).slice(0, options.limit);
    return fused.flatMap((entry) => {
      const item = this.get(entry.id);
      return item ? [{ item, score: entry.score, matchedBy: entry.matchedBy as ScoredMemory['matchedBy'] }] : [];
    });
  }

  forget(id: string): boolean {
    return this.db.prepare('DELETE FROM memory_items WHERE id = ?').run(id).changes > 0;
  }

  pin(id: string, pinned: boolean): MemoryItem {
    const fullId = this.resolveId(id);
    this.db.prepare('UPDATE memory_items SET pinned = ? WHERE id = ?').run(pinned ? 1 : 0, fullId);
    return this.get(fullId) as MemoryItem;
  }

  /** A global item is recalled by runs of every workspace; a local one only by runs of its own. */
  setGlobal(id: string, global: boolean): MemoryItem {
    const fullId = this.resolveId(id);
    this.db.prepare('UPDATE memory_items SET global = ? WHERE id = ?').run(global ? 1 : 0, fullId);
    return this.get(fullId) as MemoryItem;
  }

  /** New text (redacted); its embedding is dropped, to be made again from the new text. */
  update(id: string, text: string): MemoryItem {
    const fullId = this.resolveId(id);
    const clean = MemoryItemSchema.shape.text.parse(this.secrets.redact(text));
    writeTransaction(this.db, () => {
      this.db.prepare('UPDATE memory_items SET text = ? WHERE id = ?').run(clean, fullId);
      this.db.prepare('DELETE FROM memory_embeddings WHERE seq = (SELECT seq FROM memory_items WHERE id = ?)').run(fullId);
    });
    return this.get(fullId) as MemoryItem;
  }

  /** Marks items as used now (recalled), which keeps them from the bound's summary. */
  touch(ids: readonly string[]): void {
    if (ids.length === 0) return;
    const now = this.now();
    const statement = this.db.prepare('UPDATE memory_items SET last_used_at = ? WHERE id = ?');
    writeTransaction(this.db, () => {
      for (const id of ids) statement.run(now, id);
    });
  }

  setEmbedding(id: string, model: string, vector: readonly number[]): void {
    const row = this.db.prepare('SELECT seq FROM memory_items WHERE id = ?').get(id) as { seq: number } | undefined;
    if (!row || vector.length === 0) return;
    const coarse = this.coarseTable(vector.length, true);
    const blob = vectorBlob(vector);
    writeTransaction(this.db, () => {
      this.db.prepare('DELETE FROM memory_embeddings WHERE seq = ?').run(row.seq);
      this.db.prepare('INSERT INTO memory_embeddings (seq, model, dimensions, embedding) VALUES (?, ?, ?, ?)').run(row.seq, model, vector.length, blob);
      if (coarse) this.db.prepare(`INSERT INTO ${coarse} (seq, model, embedding) VALUES (?, ?, vec_quantize_binary(vec_f32(?)))`).run(BigInt(row.seq), model, blob);
    });
  }

  /**
   * The vec0 table of binary-quantised vectors for one dimension (a bit each: a 32nd of the exact
   * vectors to scan), made with the trigger that keeps it in step with memory_embeddings. Null for a
   * dimension that is not a whole number of bytes: those are scanned exactly.
   */
  private coarseTable(dimensions: number, create: boolean): string | null {
    if (!Number.isInteger(dimensions) || dimensions % 8 !== 0 || dimensions > MAX_DIMENSIONS) return null;
    const table = `memory_vec_${dimensions}`;
    if (this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table)) return table;
    if (!create) return null;
    this.db.exec(`
      CREATE VIRTUAL TABLE IF NOT EXISTS ${table} USING vec0 (seq INTEGER PRIMARY KEY, model TEXT PARTITION KEY, embedding BIT[${dimensions}]);
      CREATE TRIGGER IF NOT EXISTS ${table}_delete AFTER DELETE ON memory_embeddings WHEN old.dimensions = ${dimensions} BEGIN DELETE FROM ${table} WHERE seq = old.seq; END;
    `);
    return table;
  }

  /** Items with no embedding from `model`, newest first: what to embed next. */
  missingEmbeddings(model: string, limit: number): { id: string; text: string }[] {
    return this.db
      .prepare('SELECT m.id, m.text FROM memory_items m LEFT JOIN memory_embeddings e ON e.seq = m.seq AND e.model = ? WHERE e.seq IS NULL ORDER BY m.seq DESC LIMIT ?')
      .all(model, limit) as { id: string; text: string }[];
  }

  private candidate(input: NewMemoryItem): MemoryItem {
    const evidence = input.evidence ?? [];
    const runIds = [...(input.source ? [input.source.runId] : []), ...evidence];
    return MemoryItemSchema.parse({
      id: randomBytes(6).toString('hex'),
      kind: input.kind,
      text: this.secrets.redact(input.text),
      source: input.source ?? null,
      evidence,
      appliesTo: input.appliesTo ? this.secrets.redact(input.appliesTo) : null,
      createdAt: this.now(),
      lastUsedAt: null,
      pinned: input.pinned ?? false,
      workspace: this.workspaceOfRuns(runIds),
      global: input.global ?? runIds.length === 0,
    });
  }

  /** The one workspace all these runs worked in; null when there are none, one is unknown, or they differ (a lesson drawn from several folders). */
  private workspaceOfRuns(runIds: readonly string[]): string | null {
    const ids = [...new Set(runIds)];
    if (ids.length === 0) return null;
    const rows = this.db.prepare(`SELECT ${RUN_WORKSPACE} AS workspace FROM runs r WHERE r.id IN (${ids.map(() => '?').join(', ')})`).all(...ids) as { workspace: string | null }[];
    const workspaces = new Set(rows.map((row) => row.workspace));
    const [only] = workspaces;
    return rows.length === ids.length && workspaces.size === 1 && only !== undefined ? only : null;
  }

  private insert(item: MemoryItem): void {
    this.db
      .prepare(
        'INSERT INTO memory_items (id, kind, text, source_run_id, source_step_id, evidence_json, applies_to, created_at, last_used_at, pinned, workspace, global) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(item.id, item.kind, item.text, item.source?.runId ?? null, item.source?.stepId ?? null, JSON.stringify(item.evidence), item.appliesTo, item.createdAt, item.lastUsedAt, item.pinned ? 1 : 0, item.workspace, item.global ? 1 : 0);
  }

  /** Candidates by Hamming distance of the quantised vectors, then ranked and thresholded by exact cosine similarity. */
  private vectorMatches(embedding: QueryEmbedding, filter: { sql: string; params: string[] }, minSimilarity: number): string[] {
    const blob = vectorBlob(embedding.vector);
    const coarse = this.coarseTable(embedding.vector.length, false);
    const candidates = coarse ? `JOIN (SELECT seq FROM ${coarse} WHERE embedding MATCH vec_quantize_binary(vec_f32(?)) AND k = ? AND model = ?) c ON c.seq = e.seq` : '';
    const rows = this.db
      .prepare(
        `SELECT m.id, vec_distance_cosine(e.embedding, ?) AS distance FROM memory_embeddings e ${candidates} JOIN memory_items m ON m.seq = e.seq
         WHERE e.model = ? AND e.dimensions = ?${filter.sql} ORDER BY distance, ${RECENCY_ORDER} LIMIT ?`,
      )
      .all(blob, ...(coarse ? [blob, COARSE_CANDIDATES, embedding.model] : []), embedding.model, embedding.vector.length, ...filter.params, CANDIDATES) as { id: string; distance: number }[];
    return rows.filter((row) => 1 - row.distance >= minSimilarity).map((row) => row.id);
  }

  private lexicalMatches(query: string, filter: { sql: string; params: string[] }): string[] {
    const match = lexicalQuery(query);
    if (!match) return [];
    const rows = this.db
      .prepare(`SELECT m.id FROM memory_fts f JOIN memory_items m ON m.seq = f.rowid WHERE memory_fts MATCH ?${filter.sql} ORDER BY bm25(memory_fts), ${RECENCY_ORDER} LIMIT ?`)
      .all(match, ...filter.params, CANDIDATES) as { id: string }[];
    return rows.map((row) => row.id);
  }

  private byRecency(ids: readonly string[]): string[] {
    const rows = this.db
      .prepare(`SELECT m.id FROM memory_items m WHERE m.id IN (${ids.map(() => '?').join(', ')}) ORDER BY ${RECENCY_ORDER}`)
      .all(...ids) as { id: string }[];
    return rows.map((row) => row.id);
  }

  private recent(filter: { sql: string; params: string[] }, limit: number): string[] {
    const rows = this.db.prepare(`SELECT m.id FROM memory_items m WHERE 1 = 1${filter.sql} ORDER BY m.seq DESC LIMIT ?`).all(...filter.params, limit) as { id: string }[];
    return rows.map((row) => row.id);
  }

  /**
   * Over the bound, the least recently used unpinned items (the excess and a hundredth of the bound,
   * so this runs once per many adds) are merged into one summary item and expire.
   */
  private enforceBound(): void {
    const max = this.options.maxItems();
    const excess = this.count() - max;
    if (excess <= 0) return;
    const batch = this.db
      .prepare(`SELECT ${COLUMNS} FROM memory_items m WHERE m.pinned = 0 ORDER BY coalesce(m.last_used_at, m.created_at), m.seq LIMIT ?`)
      .all(Math.max(2, excess + 1 + Math.ceil(max / 100)))
      .map(toItem);
    if (batch.length === 0) return;
    const remove = this.db.prepare('DELETE FROM memory_items WHERE id = ?');
    for (const item of batch) remove.run(item.id);
    if (batch.length > 1) this.insert(MemoryItemSchema.parse({ ...mergeForBound(batch), id: randomBytes(6).toString('hex'), createdAt: this.now(), lastUsedAt: null, pinned: false, ...mergedScope(batch) }));
  }
}
