import { jsonrepair } from 'jsonrepair';

/**
 * JSON as small local models actually write it: wrapped in prose or code fences, with trailing
 * commas, single or curly quotes, unquoted keys, Python literals (True, None), or a missing closing
 * brace. Repairs are jsonrepair's.
 */

export type JsonResult = { ok: true; value: unknown } | { ok: false; error: string };

/**
 * Where the bracketed value opening at `start` ({ or [) closes, skipping brackets inside strings;
 * the text's end when it never closes.
 */
export function balancedEnd(text: string, start: number): number {
  let depth = 0;
  let quote: string | null = null;
  for (let index = start; index < text.length; index++) {
    const char = text[index];
    if (quote) {
      if (char === '\\') index++;
      else if (char === quote) quote = null;
      continue;
    }
    if (char === '"' || char === "'") quote = char;
    else if (char === '{' || char === '[') depth++;
    else if ((char === '}' || char === ']') && --depth === 0) return index + 1;
  }
  return text.length;
}

/** The first balanced {...} at or after `from`; an unterminated one is returned to its end. */
export function extractFirstJsonObject(text: string, from = 0): string | null {
  const start = text.indexOf('{', from);
  return start < 0 ? null : text.slice(start, balancedEnd(text, start));
}

export function parseLenientJson(text: string): JsonResult {
  const trimmed = text.trim().replace(/^```(?:json)?\s*/i, '').replace(/\s*```$/, '');
  try {
    return { ok: true, value: JSON.parse(trimmed) };
  } catch (error) {
    try {
      return { ok: true, value: JSON.parse(jsonrepair(trimmed)) };
    } catch {
      return { ok: false, error: (error as Error).message };
    }
  }
}
