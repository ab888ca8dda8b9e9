/**
 * JSON Schemas as a grammar-constrained server can take them. llama.cpp (llama-server, and every
 * engine built on it) turns each tool's parameters and each `response_format` schema into a grammar,
 * and refuses the whole request ("failed to parse grammar") when a repetition reaches 2,000 or a
 * `pattern` uses syntax its converter lacks. Archon checks every answer against its own zod schema
 * afterwards, so a looser grammar loses nothing; a refused request loses the run.
 */

/** The largest repetition llama.cpp's grammar accepts (its threshold is 2,000). */
export const GRAMMAR_REPETITION_LIMIT = 1999;

const BOUNDS = ['maxLength', 'minLength', 'maxItems', 'minItems', 'maxProperties', 'minProperties'] as const;
/** Keywords a grammar cannot always express; the zod check after the answer still holds them. */
const DROPPED = ['pattern', 'format', '$schema'] as const;

type Json = unknown;

function safeNode(node: Json): Json {
  if (Array.isArray(node)) return node.map(safeNode);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, Json> = {};
  for (const [key, value] of Object.entries(node)) {
    if ((DROPPED as readonly string[]).includes(key) && typeof value === 'string') continue;
    out[key] = (BOUNDS as readonly string[]).includes(key) && typeof value === 'number' ? Math.min(value, GRAMMAR_REPETITION_LIMIT) : safeNode(value);
  }
  return out;
}

/** The schema with every repetition bound below llama.cpp's limit and no `pattern`/`format` string. */
export function grammarSafeSchema(schema: Record<string, unknown>): Record<string, unknown> {
  return safeNode(schema) as Record<string, unknown>;
}

/** What in a schema a grammar converter would refuse: a bound of 2,000 or more, or a pattern; empty when it is safe. */
export function grammarProblems(schema: unknown, path = '#'): string[] {
  if (Array.isArray(schema)) return schema.flatMap((item, index) => grammarProblems(item, `${path}/${index}`));
  if (typeof schema !== 'object' || schema === null) return [];
  return Object.entries(schema).flatMap(([key, value]) => {
    const here = `${path}/${key}`;
    if ((BOUNDS as readonly string[]).includes(key) && typeof value === 'number' && value > GRAMMAR_REPETITION_LIMIT) return [`${here} is ${value}`];
    if (key === 'pattern' && typeof value === 'string') return [`${here} is a pattern`];
    return grammarProblems(value, here);
  });
}

/** A server's refusal to build a grammar from what it was sent (llama.cpp's words). */
export function isGrammarRefusal(message: string): boolean {
  return /failed to parse grammar|failed to initiali[sz]e sampler|grammar.*(error|invalid|exceeds)|JSON schema conversion failed|unrecognized schema/i.test(message);
}
