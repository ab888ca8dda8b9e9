import { InvalidArgumentError, Option, type Command } from 'commander';
import { MemoryKindSchema, type MemoryItem } from '../../shared/schemas/memory';
import type { ArchonRuntime } from '../../core/runtime';

export interface MemoryListFlags {
  kind?: MemoryItem['kind'];
  json?: boolean;
  limit: number;
}

const DEFAULT_LIMIT = 50;

function limit(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1 || number > 100_000) throw new InvalidArgumentError('--limit is a whole number from 1 to 100000.');
  return number;
}

function sourceOf(item: MemoryItem): string {
  if (item.source) return `run ${item.source.runId}${item.source.stepId ? ` step ${item.source.stepId}` : ''}`;
  return item.evidence.length > 0 ? `runs ${item.evidence.join(',')}` : 'operator';
}

function describe(item: MemoryItem, score?: number): string {
  const text = item.text.replace(/\s+/g, ' ').trim();
  const head = [item.id, item.kind.padEnd(10), item.pinned ? 'pinned' : '      ', item.global ? 'global' : '      ', ...(score === undefined ? [] : [score.toFixed(4)]), sourceOf(item)].join('  ');
  return `${head}\n  ${text.length > 160 ? `${text.slice(0, 160)}…` : text}\n`;
}

/** The flags `memory list` and `memory search` share. */
export function addMemoryOutputFlags(command: Command): Command {
  return command.option('--json', 'one JSON object per line').option('--limit <n>', `at most this many (default ${DEFAULT_LIMIT})`, limit, DEFAULT_LIMIT);
}

export function addMemoryListFlags(command: Command): Command {
  return addMemoryOutputFlags(command.addOption(new Option('--kind <kind>', 'only this kind').choices(MemoryKindSchema.options)));
}

/** `archon memory list`: newest first, with kind, pin, scope and source. */
export function listMemory(runtime: ArchonRuntime, flags: MemoryListFlags): number {
  const items = runtime.store.memory.list({ kind: flags.kind, limit: flags.limit });
  for (const item of items) process.stdout.write(flags.json ? `${JSON.stringify(item)}\n` : describe(item));
  if (items.length === 0 && !flags.json) process.stdout.write(flags.kind ? `No ${flags.kind} memories.\n` : 'No memories yet: runs store what they learn as they go.\n');
  return 0;
}

/** `archon memory search`: lexical (FTS5) over the text, with recency; vector recall needs the model server and happens in runs. */
export function searchMemory(runtime: ArchonRuntime, query: string, flags: Omit<MemoryListFlags, 'kind'>): number {
  const matched = runtime.store.memory.search(query, { limit: flags.limit, recentFallback: false });
  for (const entry of matched) process.stdout.write(flags.json ? `${JSON.stringify({ ...entry.item, score: entry.score })}\n` : describe(entry.item, entry.score));
  if (matched.length === 0 && !flags.json) process.stdout.write(`No memory matches "${query}".\n`);
  return 0;
}

/** `archon memory forget`: the item is deleted with its index entries and embedding. */
export function forgetMemory(runtime: ArchonRuntime, reference: string): number {
  const id = runtime.store.memory.resolveId(reference);
  runtime.store.memory.forget(id);
  process.stdout.write(`Forgot memory ${id}.\n`);
  return 0;
}

/** `archon memory pin` / `unpin`: a pinned item is never summarised away by the bound. */
export function pinMemory(runtime: ArchonRuntime, reference: string, pinned: boolean): number {
  const item = runtime.store.memory.pin(reference, pinned);
  process.stdout.write(pinned ? `Pinned memory ${item.id}: it stays however full memory gets.\n` : `Unpinned memory ${item.id}.\n`);
  return 0;
}

/** `archon memory global` / `local`: a global item is recalled by runs of every workspace, a local one only by runs of its own. */
export function scopeMemory(runtime: ArchonRuntime, reference: string, global: boolean): number {
  const item = runtime.store.memory.setGlobal(reference, global);
  if (global) process.stdout.write(`Memory ${item.id} is global: runs in every workspace recall it.\n`);
  else if (item.workspace) process.stdout.write(`Memory ${item.id} is recalled only by runs in ${item.workspace}.\n`);
  else process.stdout.write(`Memory ${item.id} is local, but it has no one workspace (its runs are gone or worked in different folders): no run recalls it until you make it global again.\n`);
  return 0;
}
