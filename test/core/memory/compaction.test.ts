import { describe, expect, it } from 'vitest';
import { compactionCut, criticalFacts, fitTranscript, historyBudget, verifiedNote } from '../../../src/core/memory/compaction';
import type { ChatMessage } from '../../../src/core/model/chat';
import { conservativeTokens, promptTokens } from '../../../src/core/model/context-window';

const opening: ChatMessage[] = [
  { role: 'system', content: 'You carry out one step.' },
  { role: 'user', content: 'Goal: g\nStep s: read the files' },
];

/** A tool turn: the model's call and a result of `size` characters. */
function turn(index: number, size: number): ChatMessage[] {
  return [
    { role: 'assistant', content: null, toolCalls: [{ id: `c${index}`, name: 'read_file', arguments: JSON.stringify({ path: `data/f${index}.txt` }) }] },
    { role: 'tool', toolCallId: `c${index}`, content: 'x'.repeat(size) },
  ];
}

const conversation = (turns: number, size: number): ChatMessage[] => [...opening, ...Array.from({ length: turns }, (_, index) => turn(index, size)).flat()];

describe('working-memory thresholds', () => {
  it('gives the history half of the prompt (the context less the answer room), the note a fifth of that and the kept turns two fifths', () => {
    expect(historyBudget({ contextLength: 4096, source: null })).toEqual({ limit: 1536, keep: 614, note: 307 });
    expect(historyBudget({ contextLength: 32_768, source: null })).toEqual({ limit: 14_336, keep: 5734, note: 2867 });
  });

  it('leaves a history within its limit alone, counting the note that stands for earlier turns', () => {
    const budget = historyBudget({ contextLength: 4096, source: null });
    const messages = conversation(4, 900);
    const history = promptTokens(messages.slice(2), undefined);
    expect(history).toBeLessThanOrEqual(budget.limit);
    expect(compactionCut(messages, 2, 0, budget)).toBeNull();
    expect(compactionCut(messages, 2, budget.limit - history + 1, budget)).not.toBeNull();
  });

  it('cuts past the limit at a model turn, keeping the most recent turns that fit the keep share', () => {
    const budget = historyBudget({ contextLength: 4096, source: null });
    const messages = conversation(8, 900);
    const cut = compactionCut(messages, 2, 0, budget) as number;
    expect(messages[cut]?.role).toBe('assistant');
    expect(promptTokens(messages.slice(cut), undefined)).toBeLessThanOrEqual(budget.keep);
    expect(promptTokens(messages.slice(cut - 2), undefined)).toBeGreaterThan(budget.keep);
  });

  it('always keeps the last turn, even when it alone is over the keep share', () => {
    const budget = historyBudget({ contextLength: 4096, source: null });
    const messages = conversation(3, 3000);
    expect(compactionCut(messages, 2, 0, budget)).toBe(6);
    expect(compactionCut(messages, 6, 0, budget)).toBeNull();
  });
});

describe('critical facts (MM-07)', () => {
  it('finds URLs, dates, paths and numbers of two digits or more, each once and not again inside a longer one', () => {
    const text = 'Invoice 48213 is at /srv/archive/ledger-7.csv, see https://example.org/a/b?x=12. Due 2026-11-23; 3 copies; notes/alpha.txt and 48213 again.';
    expect(criticalFacts(text)).toEqual(['https://example.org/a/b?x=12', '2026-11-23', '/srv/archive/ledger-7.csv', 'notes/alpha.txt', '48213']);
  });

  it('appends what the summary lost, verbatim, and nothing it kept', () => {
    const budget = historyBudget({ contextLength: 4096, source: null });
    const source = 'read_file({"path":"data/f0.txt"})\ntool result: invoice 48213 filed at /srv/archive/ledger-7.csv on 2026-11-23';
    const { note, facts } = verifiedNote('Read the invoice file data/f0.txt.', source, budget);
    expect(facts).toEqual(['2026-11-23', 'data/f0.txt', '/srv/archive/ledger-7.csv', '48213']);
    expect(note).toBe('Read the invoice file data/f0.txt.\nKept verbatim from the summarised turns: 2026-11-23; /srv/archive/ledger-7.csv; 48213');
    expect(verifiedNote('Invoice 48213 at /srv/archive/ledger-7.csv (data/f0.txt), 2026-11-23.', source, budget).note).toBe('Invoice 48213 at /srv/archive/ledger-7.csv (data/f0.txt), 2026-11-23.');
  });

  it('holds the summary and the appended facts each to the note share, the earliest facts first', () => {
    const budget = historyBudget({ contextLength: 4096, source: null });
    const source = Array.from({ length: 400 }, (_, index) => `/data/file-${index}.csv`).join(' ');
    const { note } = verifiedNote('y'.repeat(10_000), source, budget);
    expect(conservativeTokens(note)).toBeLessThanOrEqual(2 * budget.note + 20);
    expect(note).toContain('/data/file-0.csv;');
    expect(note).not.toContain('/data/file-399.csv');
  });

  it('cuts a transcript to the room of the summary request, saying so', () => {
    expect(fitTranscript('short', 100)).toBe('short');
    const cut = fitTranscript('z'.repeat(5000), 300);
    expect(conservativeTokens(cut)).toBeLessThanOrEqual(300);
    expect(cut).toMatch(/\[cut by Archon to fit the summary request\]$/);
  });
});
