import { looseJson, type RawCall } from './dialect';

/**
 * Python call expressions as models write them: `[get_weather(city="Paris"), f()]`, one per line,
 * or `tool.call(code="…")`. Keyword arguments only; values are Python literals (jsonrepair reads
 * True/None/single quotes). Returns null when the text is not a sequence of calls.
 */

const IDENTIFIER = /[A-Za-z_][\w.-]*/y;
const SEPARATORS = /[\s,;]*/y;

/** The end of a value: the first top-level `,` or `)` outside strings and brackets. */
function valueEnd(text: string, start: number): number {
  let depth = 0;
  let quote: string | null = null;
  for (let index = start; index < text.length; index++) {
    const char = text[index];
    if (quote) {
      if (char === '\\') index++;
      else if (char === quote) quote = null;
    } else if (char === '"' || char === "'") quote = char;
    else if (char === '(' || char === '[' || char === '{') depth++;
    else if (depth > 0 && (char === ')' || char === ']' || char === '}')) depth--;
    else if (depth === 0 && (char === ',' || char === ')')) return index;
  }
  return -1;
}

function pythonValue(text: string): unknown {
  const trimmed = text.trim();
  try {
    return JSON.parse(trimmed);
  } catch {
    const value = looseJson(trimmed);
    return value === undefined ? trimmed : value;
  }
}

function readCall(text: string, start: number): { call: RawCall; end: number } | null {
  IDENTIFIER.lastIndex = start;
  const identifier = IDENTIFIER.exec(text);
  if (!identifier) return null;
  let index = IDENTIFIER.lastIndex;
  while (text[index] === ' ') index++;
  if (text[index] !== '(') return null;
  index++;
  const args: Record<string, unknown> = {};
  for (let guard = 0; guard < 1000; guard++) {
    while (/\s|,/.test(text[index] ?? '')) index++;
    if (text[index] === ')') return { call: { name: identifier[0].replace(/\.call$/, ''), args }, end: index + 1 };
    const key = /^([A-Za-z_]\w*)\s*=\s*/.exec(text.slice(index));
    if (!key) return null;
    index += key[0].length;
    const end = valueEnd(text, index);
    if (end < 0) return null;
    args[key[1] as string] = pythonValue(text.slice(index, end));
    index = end;
  }
  return null;
}

export function parsePythonCalls(text: string): RawCall[] | null {
  let body = text.trim();
  if (body.startsWith('[') && body.endsWith(']')) body = body.slice(1, -1);
  const print = /^print\(([\s\S]*)\)$/.exec(body.trim());
  if (print) body = print[1] as string;
  const calls: RawCall[] = [];
  let index = 0;
  while (index < body.length) {
    SEPARATORS.lastIndex = index;
    SEPARATORS.exec(body);
    index = SEPARATORS.lastIndex;
    if (index >= body.length) break;
    const read = readCall(body, index);
    if (!read) return null;
    calls.push(read.call);
    index = read.end;
  }
  return calls.length > 0 ? calls : null;
}
