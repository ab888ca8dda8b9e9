import type { MemoryItem } from '../../shared/schemas/memory';
import type { Log } from '../log';
import { conservativeTokens } from '../model/context-window';
import { CONTEXT_SHARES } from './compaction';
import type { Embedder } from './embedder';
import type { MemoryStore, NewMemoryItem, QueryEmbedding, ScoredMemory } from './memory-store';

/** Seed 001's share of the context for what is retrieved (compaction.ts). */
export const RECALL_SHARE = CONTEXT_SHARES.retrieved;
/** The most items one request is given. */
export const RECALL_LIMIT = 5;
/** The context assumed when the server reports none and the operator set none. */
const ASSUMED_CONTEXT = 8192;
/** Items without an embedding from the model are embedded this many at a time, newest first, as recall goes. */
const EMBED_BATCH = 32;

export const RELEVANT_MEMORY_HEADING = 'Relevant memory';
/** How long a step's result waits for others to share its write (a fan-out's steps end together). */
export const FACT_BATCH_MS = 50;
/** The most results that wait: one more writes them all at once. */
export const FACT_BATCH_MAX = 64;

/**
 * A run's long-term memory: recall within its share of the model's context (vector search when the
 * embedder answers, else FTS5 alone) and storing what the run learned. Storing never fails a run.
 */
export class RunMemory {
  private warned = false;
  private pending: NewMemoryItem[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: MemoryStore,
    /** Shared with a run's sub-agents, which recall through the same model server. */
    readonly embedder: Embedder | null,
    private readonly contextLength: number | null,
    private readonly log?: Log,
  ) {}

  /**
   * The items most relevant to `query` that fit the recall budget, marked used; never the run's own
   * (its steps hand those on through working memory). Only planning, with nothing found, is given
   * the most recent items instead. A store that fails is logged: the run goes on without memory.
   */
  async recall(query: string, signal: AbortSignal, scope: { runId: string; planning: boolean }): Promise<ScoredMemory[]> {
    const embedding = await this.queryEmbedding(query, signal);
    try {
      const found = this.store.search(query, { limit: RECALL_LIMIT * 2, embedding, recentFallback: scope.planning, excludeRunId: scope.runId });
      const recalled = withinBudget(found, Math.floor((this.contextLength ?? ASSUMED_CONTEXT) * RECALL_SHARE)).slice(0, RECALL_LIMIT);
      this.store.touch(recalled.map((entry) => entry.item.id));
      return recalled;
    } catch (error) {
      this.log?.error({ err: error }, 'memory recall failed; the request goes without recalled memory');
      return [];
    }
  }

  remember(item: NewMemoryItem): MemoryItem | null {
    return this.guarded(item.kind, () => this.store.add(item));
  }

  /**
   * A step's result, kept for later runs: it waits until no other has come for FACT_BATCH_MS, then
   * they are written in one transaction, off the path of the steps waiting on them. Nothing in the
   * run reads it (recall leaves out a run's own items); `flush`, at the run's end, writes what still waits.
   */
  rememberSoon(item: NewMemoryItem): void {
    this.pending.push(item);
    clearTimeout(this.timer);
    if (this.pending.length >= FACT_BATCH_MAX) this.flush();
    else this.timer = setTimeout(() => this.flush(), FACT_BATCH_MS).unref();
  }

  /** Writes the results waiting to be kept. */
  flush(): void {
    clearTimeout(this.timer);
    const items = this.pending;
    this.pending = [];
    if (items.length > 0) this.guarded('fact', () => this.store.addAll(items));
  }

  /** The run's episode, replacing the one an earlier ending of the same run left. */
  rememberEpisode(runId: string, text: string): MemoryItem | null {
    return this.guarded('episode', () => this.store.putEpisode(runId, text));
  }

  private guarded<T>(kind: string, write: () => T): T | null {
    try {
      return write();
    } catch (error) {
      this.log?.error({ err: error, kind }, 'a memory could not be stored; the run goes on without it');
      return null;
    }
  }

  private warnUnavailable(embedder: Embedder): void {
    if (this.warned || embedder.failure === null) return;
    this.warned = true;
    this.log?.warn(
      { model: embedder.model, failure: embedder.failure },
      `embeddings unavailable (${embedder.failure}); memory recall uses FTS5 only. Check that the model server has the embedding model ${embedder.model}, or clear the embeddingModel setting.`,
    );
  }

  /** The query's vector, with a batch of not-yet-embedded items embedded in the same request. */
  private async queryEmbedding(query: string, signal: AbortSignal): Promise<QueryEmbedding | null> {
    if (!this.embedder) return null;
    let missing: { id: string; text: string }[] = [];
    try {
      missing = this.store.missingEmbeddings(this.embedder.model, EMBED_BATCH);
    } catch (error) {
      this.log?.error({ err: error }, 'memory items to embed could not be read; the query alone is embedded');
    }
    const vectors = await this.embedder.embed([...missing.map((item) => item.text), query], signal);
    if (!vectors) {
      this.warnUnavailable(this.embedder);
      return null;
    }
    try {
      missing.forEach((item, index) => this.store.setEmbedding(item.id, this.embedder?.model ?? '', vectors[index] ?? []));
    } catch (error) {
      this.log?.error({ err: error }, 'embeddings could not be stored; they are asked for again at the next recall');
    }
    return { model: this.embedder.model, vector: vectors[missing.length] ?? [] };
  }
}

/** The best items whose text, with its heading line, fits in `budgetTokens`; one too large is passed over for the next. */
export function withinBudget(found: readonly ScoredMemory[], budgetTokens: number): ScoredMemory[] {
  let left = budgetTokens - conservativeTokens(RELEVANT_MEMORY_HEADING) - 16;
  return found.filter((entry) => {
    const cost = conservativeTokens(memoryEntry(entry.item));
    if (cost > left) return false;
    left -= cost;
    return true;
  });
}

function memoryEntry(item: MemoryItem): string {
  const source = item.source ? `run ${item.source.runId}${item.source.stepId ? `, step ${item.source.stepId}` : ''}` : item.evidence.length > 0 ? `runs ${item.evidence.join(', ')}` : 'the operator';
  return `- ${item.kind} ${item.id} (source: ${source}):\n${item.text}`;
}

/** The request's section of recalled items, each text verbatim with its source; null when there are none. */
export function relevantMemorySection(items: readonly ScoredMemory[]): string | null {
  if (items.length === 0) return null;
  return [`${RELEVANT_MEMORY_HEADING} (from earlier runs; use what helps, and check what matters):`, ...items.map((entry) => memoryEntry(entry.item))].join('\n');
}
