/** Reciprocal rank fusion's constant: ranks far down a list still count, but little. */
export const RRF_K = 60;
/** Recency counts for less than either search: it orders near-ties, it does not outrank relevance. */
export const RECENCY_WEIGHT = 0.25;

export interface RankedList {
  name: string;
  /** Best first. */
  ids: readonly string[];
}

export interface FusedEntry {
  id: string;
  score: number;
  matchedBy: string[];
}

/**
 * Reciprocal rank fusion: each list adds 1/(RRF_K + rank) for an id it holds; the recency list adds
 * a weighted share. An id only the recency list holds (the fallback) is matched by it alone.
 */
export function fuseRankings(rankings: readonly RankedList[], recency: RankedList): FusedEntry[] {
  const entries = new Map<string, FusedEntry>();
  const credit = (id: string, amount: number, name: string | null) => {
    const entry = entries.get(id) ?? { id, score: 0, matchedBy: [] };
    entry.score += amount;
    if (name) entry.matchedBy.push(name);
    entries.set(id, entry);
  };
  for (const ranking of rankings) ranking.ids.forEach((id, rank) => credit(id, 1 / (RRF_K + rank + 1), ranking.name));
  recency.ids.forEach((id, rank) => credit(id, RECENCY_WEIGHT / (RRF_K + rank + 1), entries.has(id) ? null : recency.name));
  return [...entries.values()].sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
}
