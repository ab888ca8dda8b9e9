import type { MemoryItem, MemoryKind } from '../../shared/schemas/memory';

/** Each merged item keeps its start, so the summary stays short however many items it stands for. */
const LINE_CHARS = 160;
const SUMMARY_CHARS = 4000;
const MAX_EVIDENCE = 20;

/**
 * The bound's summary of items about to expire: a deterministic merge (no model call), one line per
 * item with its kind and source, and the runs they came from as evidence.
 */
export function mergeForBound(items: readonly MemoryItem[]): { kind: MemoryKind; text: string; source: null; evidence: string[]; appliesTo: null } {
  const kinds = new Set(items.map((item) => item.kind));
  const lines = items.map((item) => {
    const from = item.source ? ` (run ${item.source.runId}${item.source.stepId ? `, step ${item.source.stepId}` : ''})` : '';
    const text = item.text.replace(/\s+/g, ' ').trim();
    return `- ${item.kind}${from}: ${text.length > LINE_CHARS ? `${text.slice(0, LINE_CHARS)}…` : text}`;
  });
  const text = `Summary of ${items.length} older memories, merged when memory reached its bound:\n${lines.join('\n')}`;
  const runs = [...new Set(items.flatMap((item) => [...(item.source ? [item.source.runId] : []), ...item.evidence]))];
  return {
    kind: kinds.size === 1 ? (items[0] as MemoryItem).kind : 'fact',
    text: text.length > SUMMARY_CHARS ? `${text.slice(0, SUMMARY_CHARS)}…` : text,
    source: null,
    evidence: runs.slice(0, MAX_EVIDENCE),
    appliesTo: null,
  };
}
