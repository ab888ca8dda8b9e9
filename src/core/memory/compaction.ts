import type { ChatMessage } from '../model/chat';
import { completionReserve, conservativeTokens, promptTokens, type ContextWindow } from '../model/context-window';

/*
 * Working-memory compaction (docs/model-protocol.md, "Context window"): the pure part. How much of
 * the context a step's history may take, which of its oldest turns a note replaces, and which facts
 * of those turns the note must keep verbatim.
 */

/** Seed 001's split of the prompt: the conversation so far, what was retrieved for it, and the template (system prompt and tools). */
export const CONTEXT_SHARES = { history: 0.5, retrieved: 0.3, template: 0.2 } as const;

/** What is left of the history after a compaction, as shares of its limit: the note, and the recent turns kept whole. */
const NOTE_SHARE = 0.2;
const KEEP_SHARE = 0.4;

export interface HistoryBudget {
  /** Past this many tokens the history is compacted. */
  limit: number;
  /** The recent turns kept whole weigh at most this (the last turn is always kept). */
  keep: number;
  /** The summary's length, and again the facts appended to it. */
  note: number;
}

/** The history's share of the prompt, the prompt being the context less the room kept for the answer. */
export function historyBudget(window: ContextWindow): HistoryBudget {
  const prompt = window.contextLength - completionReserve(window.contextLength, undefined);
  const limit = Math.floor(prompt * CONTEXT_SHARES.history);
  return { limit, keep: Math.floor(limit * KEEP_SHARE), note: Math.floor(limit * NOTE_SHARE) };
}

/**
 * Where a compaction should end, or null when the history is within its limit: `history` runs from
 * the end of the opening (or of the last compaction) and weighs the note that stands for what came
 * before. The cut falls on a model turn, so tool results always follow the call they answer; the
 * note covers everything before it.
 */
export function compactionCut(messages: readonly ChatMessage[], from: number, noteTokens: number, budget: HistoryBudget): number | null {
  const weigh = (start: number) => promptTokens(messages.slice(start), undefined);
  if (noteTokens + weigh(from) <= budget.limit) return null;
  const turns = messages.map((message, position) => (message.role === 'assistant' && position > from ? position : -1)).filter((position) => position > 0);
  const last = turns.at(-1);
  if (last === undefined) return null;
  return turns.find((position) => weigh(position) <= budget.keep) ?? last;
}

const URL = /\bhttps?:\/\/[^\s"'<>()[\]{}`]+/g;
const DATE = /\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b|\b\d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* \d{4}\b|\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* \d{1,2}, \d{4}\b/g;
const PATH = /(?:[A-Za-z]:\\|~\/|\.{1,2}\/|\/)?(?:[\w.-]+[/\\])+[\w.-]+/g;
/** Numbers of two digits or more: single digits are everywhere and say little. */
const NUMBER = /-?\b\d[\d,.]*\d\b/g;

function trimPunctuation(fact: string): string {
  return fact.replace(/[.,;:!?]+$/, '');
}

/**
 * The facts of a text a summary must not lose, in order of appearance: URLs, dates, paths, then
 * numbers, each found once; a fact inside a longer one is not listed apart.
 */
export function criticalFacts(text: string): string[] {
  const facts: string[] = [];
  let rest = text;
  for (const pattern of [URL, DATE, PATH, NUMBER]) {
    for (const match of rest.matchAll(pattern)) {
      const fact = trimPunctuation(match[0]);
      if (fact.length > 1 && !facts.includes(fact)) facts.push(fact);
    }
    rest = rest.replace(pattern, ' ');
  }
  return facts;
}

function capTokens(text: string, tokens: number): string {
  let kept = text.slice(0, tokens * 3);
  while (conservativeTokens(kept) > tokens) kept = kept.slice(0, Math.floor(kept.length * 0.9));
  return kept;
}

/**
 * The note as kept: the model's summary (held to its share), then every fact of `source` it left
 * out, verbatim, as many as fit the same share again (the earliest first).
 */
export function verifiedNote(summary: string, source: string, budget: HistoryBudget): { note: string; facts: string[] } {
  const kept = capTokens(summary.trim(), budget.note);
  const facts = criticalFacts(source);
  const lost: string[] = [];
  for (const fact of facts.filter((candidate) => !kept.includes(candidate))) {
    if (conservativeTokens([...lost, fact].join('; ')) > budget.note) break;
    lost.push(fact);
  }
  return { note: lost.length > 0 ? `${kept}\nKept verbatim from the summarised turns: ${lost.join('; ')}` : kept, facts };
}

/** A message as the summariser reads it: its role, its text and the calls it made. */
function transcriptLine(message: ChatMessage): string {
  if (message.role === 'assistant') {
    const calls = (message.toolCalls ?? []).map((call) => `${call.name}(${call.arguments})`);
    return `assistant: ${[message.content ?? '', ...calls].filter(Boolean).join('\n')}`;
  }
  return `${message.role === 'tool' ? 'tool result' : message.role}: ${message.content}`;
}

/** The turns to summarise as one text: what the summariser reads, and what the facts check reads in full. */
export function transcriptOf(messages: readonly ChatMessage[]): string {
  return messages.map(transcriptLine).join('\n\n');
}

/** The transcript held to what the summary request has room for; the facts check still reads all of it. */
export function fitTranscript(transcript: string, tokens: number): string {
  if (conservativeTokens(transcript) <= tokens) return transcript;
  return `${capTokens(transcript, Math.max(0, tokens - 20))}\n[cut by Archon to fit the summary request]`;
}
