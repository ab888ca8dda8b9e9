/**
 * JSON as small local models actually write it: wrapped in prose or code fences, with trailing
 * commas, single or curly quotes, unquoted keys, or a missing closing brace.
 */

export type JsonResult = { ok: true; value: unknown } | { ok: false; error: string };

/** The first balanced {...} at or after `from`; an unterminated one is returned to its end. */
export function extractFirstJsonObject(text: string, from = 0): string | null {
  const start = text.indexOf('{', from);
  if (start < 0) return null;
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
    else if (char === '{') depth++;
    else if (char === '}' && --depth === 0) return text.slice(start, index + 1);
  }
  return text.slice(start);
}

function closeOpenBrackets(text: string): string {
  const stack: string[] = [];
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (inString) {
      if (char === '\\') index++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{') stack.push('}');
    else if (char === '[') stack.push(']');
    else if (char === '}' || char === ']') stack.pop();
  }
  return (inString ? `${text}"` : text) + stack.reverse().join('');
}

function repair(text: string): string {
  const curlyFixed = text.replace(/[\u201c\u201d]/g, '"').replace(/[\u2018\u2019]/g, "'");
  // Single quotes are read as string quotes only when no double quote is used, so apostrophes survive.
  const quoted = curlyFixed.includes('"')
    ? curlyFixed
    : curlyFixed.replace(/'((?:[^'\\]|\\.)*)'/g, (_match, inner: string) => `"${inner}"`);
  const normalized = quoted.replace(/([{,]\s*)([A-Za-z_$][\w$-]*)\s*:/g, '$1"$2":');
  return closeOpenBrackets(normalized).replace(/,\s*([}\]])/g, '$1');
}

export function parseLenientJson(text: string): JsonResult {
  const trimmed = text.trim().replace(/^```(?:json)?\s*/i, '').replace(/\s*```$/, '');
  try {
    return { ok: true, value: JSON.parse(trimmed) };
  } catch (error) {
    try {
      return { ok: true, value: JSON.parse(repair(trimmed)) };
    } catch {
      return { ok: false, error: (error as Error).message };
    }
  }
}
