import { balancedEnd } from '../lenient-json';
import { callsFromJson, looseJson, type Dialect, type DialectMatch, type RawCall } from './dialect';
import { parsePythonCalls } from './python-calls';

/**
 * One reader per dialect family, tried in this order (the most distinctive markers first, bare
 * JSON and bare Python lists last). Each returns the calls it found and where their markup began.
 */

const match = (calls: RawCall[], at: number): DialectMatch | null => (calls.length > 0 ? { calls, at } : null);

/** Every `open…close` block (an unclosed one runs to the next `open` or the end). */
function blocks(text: string, open: string, close: string): { body: string; at: number }[] {
  const found: { body: string; at: number }[] = [];
  for (let at = text.indexOf(open); at >= 0 && found.length < 64; ) {
    const start = at + open.length;
    const closeAt = text.indexOf(close, start);
    const nextOpen = text.indexOf(open, start);
    const end = closeAt >= 0 && (nextOpen < 0 || closeAt < nextOpen) ? closeAt : nextOpen >= 0 ? nextOpen : text.length;
    found.push({ body: text.slice(start, end), at });
    at = nextOpen >= 0 && nextOpen >= end ? nextOpen : text.indexOf(open, end);
  }
  return found;
}

function jsonBlocks(text: string, open: string, close: string): DialectMatch | null {
  const found = blocks(text, open, close);
  return match(found.flatMap((block) => jsonSequence(block.body)), found[0]?.at ?? -1);
}

/** Several JSON values one after another (a list, objects per line or split by `;`). */
function jsonSequence(body: string): RawCall[] {
  const calls: RawCall[] = [];
  for (let index = body.search(/[[{]/); index >= 0 && calls.length < 64; ) {
    const end = balancedEnd(body, index);
    calls.push(...callsFromJson(looseJson(body.slice(index, end))));
    const next = body.slice(end).search(/[[{]/);
    index = next < 0 ? -1 : end + next;
  }
  return calls;
}

const TAG_VALUE = (key: string) => new RegExp(`<${key}=([^>]+)>([\\s\\S]*?)(?:</${key}>|(?=<${key}=)|(?=</function>)|$)`, 'g');

function xmlParameters(body: string, key: string): Record<string, string> {
  const args: Record<string, string> = {};
  for (const [, name, value] of body.matchAll(TAG_VALUE(key))) args[(name as string).trim().replace(/^"|"$/g, '')] = value as string;
  return args;
}

/** `<function=NAME>` blocks; `style` picks Qwen3-Coder's `<parameter=…>` bodies or Functionary's JSON ones. */
function functionTags(text: string, style: 'parameters' | 'json'): DialectMatch | null {
  const found = blocks(text, '<function=', '</function>');
  const calls = found.flatMap(({ body }): RawCall[] => {
    const head = /^"?([^>"]+)"?>/.exec(body);
    if (!head) return [];
    const rest = body.slice(head[0].length);
    const hasParameters = rest.includes('<parameter=');
    if (style === 'parameters') return hasParameters || rest.trim() === '' ? [{ name: (head[1] as string).trim(), args: xmlParameters(rest, 'parameter'), textValues: true }] : [];
    return !hasParameters && rest.trim().startsWith('{') ? [{ name: (head[1] as string).trim(), args: rest.trim() }] : [];
  });
  const first = found[0]?.at ?? -1;
  const wrapper = text.lastIndexOf('tool_call>', first);
  return match(calls, wrapper >= 0 ? text.lastIndexOf('<', wrapper) : first);
}

function pythonBlocks(text: string, open: string, close: string): DialectMatch | null {
  const found = blocks(text, open, close);
  return match(found.flatMap((block) => parsePythonCalls(block.body) ?? jsonSequence(block.body)), found[0]?.at ?? -1);
}

const BAR = '[|｜]';
const deepseekToken = (name: string) => `<${BAR}${name}${BAR}>`;
const DEEPSEEK_CALL = new RegExp(
  `${deepseekToken('tool▁call▁begin')}([\\s\\S]*?)${deepseekToken('tool▁sep')}([\\s\\S]*?)(?=${deepseekToken('tool▁call▁end')}|${deepseekToken('tool▁call▁begin')}|${deepseekToken('tool▁calls▁end')}|$)`,
  'g',
);

function deepseek(text: string): DialectMatch | null {
  const calls: RawCall[] = [];
  let first = -1;
  for (const found of text.matchAll(DEEPSEEK_CALL)) {
    first = first < 0 ? (found.index ?? 0) : first;
    const kind = (found[1] as string).trim();
    let body = found[2] as string;
    let name = kind;
    if (kind === 'function' || kind === '') {
      const newline = body.indexOf('\n');
      name = (newline < 0 ? body : body.slice(0, newline)).trim();
      body = newline < 0 ? '' : body.slice(newline + 1);
    }
    calls.push({ name, args: body.replace(/```(?:json)?/g, '').trim() });
  }
  const section = text.search(new RegExp(deepseekToken('tool▁calls▁begin')));
  return match(calls, section >= 0 ? section : first);
}

function mistral(text: string): DialectMatch | null {
  const parts = text.split('[TOOL_CALLS]');
  if (parts.length < 2) return null;
  const calls = parts.slice(1).flatMap((part): RawCall[] => {
    const body = part.replace('[/TOOL_CALLS]', '').trimStart();
    if (body.startsWith('[') || body.startsWith('{')) return jsonSequence(body);
    const head = /^([\w.-]+)(?:\[CALL_ID\][^[]*)?\[ARGS\]/.exec(body);
    if (!head) return [];
    const start = head[0].length;
    return [{ name: head[1] as string, args: body.slice(start, body[start] === '{' ? balancedEnd(body, start) : undefined) }];
  });
  return match(calls, text.indexOf('[TOOL_CALLS]'));
}

function harmony(text: string): DialectMatch | null {
  const calls: RawCall[] = [];
  let first = -1;
  for (const found of text.matchAll(/to=functions\.([\w.-]+)[\s\S]*?<\|message\|>([\s\S]*?)(?=<\|call\|>|<\|end\|>|<\|start\|>|$)/g)) {
    first = first < 0 ? (found.index ?? 0) : first;
    calls.push({ name: found[1] as string, args: found[2] as string });
  }
  if (first < 0) return null;
  const header = Math.max(text.lastIndexOf('<|start|>', first), text.lastIndexOf('<|channel|>', first));
  return match(calls, header >= 0 ? header : first);
}

function kimi(text: string): DialectMatch | null {
  const calls: RawCall[] = [];
  let first = -1;
  const pattern = /<\|tool_call_begin\|>\s*(?:functions\.)?([\w.-]+?)(?::\d+)?\s*<\|tool_call_argument_begin\|>([\s\S]*?)(?=<\|tool_call_end\|>|<\|tool_call_begin\|>|<\|tool_calls_section_end\|>|$)/g;
  for (const found of text.matchAll(pattern)) {
    first = first < 0 ? (found.index ?? 0) : first;
    calls.push({ name: found[1] as string, args: found[2] as string });
  }
  const section = text.indexOf('<|tool_calls_section_begin|>');
  return match(calls, section >= 0 && section < first ? section : first);
}

/** GLM-4.5+: `<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>` (or `NAME\n{json}`). */
function glm(text: string): DialectMatch | null {
  const found = blocks(text, '<tool_call>', '</tool_call>');
  const calls = found.flatMap(({ body }): RawCall[] => {
    const trimmed = body.trim();
    if (/^[[{`<]/.test(trimmed)) return [];
    const head = /^([\w.-]+)\s*/.exec(trimmed);
    if (!head) return [];
    const rest = trimmed.slice(head[0].length);
    if (rest.startsWith('{')) return [{ name: head[1] as string, args: rest }];
    if (rest !== '' && !rest.startsWith('<arg_key>')) return [];
    const args: Record<string, string> = {};
    for (const [, key, value] of rest.matchAll(/<arg_key>([\s\S]*?)<\/arg_key>\s*<arg_value>([\s\S]*?)(?:<\/arg_value>|$)/g)) args[(key as string).trim()] = value as string;
    return [{ name: head[1] as string, args, textValues: true }];
  });
  return match(calls, found[0]?.at ?? -1);
}

/** MiniMax-M2: `<invoke name="f"><parameter name="k">v</parameter></invoke>`; M1: JSON lines in `<tool_calls>`. */
function minimax(text: string): DialectMatch | null {
  const invokes = [...text.matchAll(/<invoke name="([^"]+)">([\s\S]*?)(?:<\/invoke>|$)/g)];
  if (invokes.length > 0) {
    const calls = invokes.map((found) => {
      const args: Record<string, string> = {};
      for (const [, key, value] of (found[2] as string).matchAll(/<parameter name="([^"]+)">([\s\S]*?)(?:<\/parameter>|$)/g)) args[key as string] = value as string;
      return { name: found[1] as string, args, textValues: true };
    });
    const wrapper = text.indexOf('<minimax:tool_call>');
    return match(calls, wrapper >= 0 ? wrapper : (invokes[0]?.index ?? 0));
  }
  const found = blocks(text, '<tool_calls>', '</tool_calls>');
  return match(found.flatMap((block) => jsonSequence(block.body)), found[0]?.at ?? -1);
}

/** FunctionGemma / Gemma 4 `call:NAME{key:<escape>text<escape>}`, and Gemma 3's ```tool_code fences. */
function gemma(text: string): DialectMatch | null {
  const calls: RawCall[] = [];
  let first = -1;
  for (const found of text.matchAll(/call:([\w.-]+)(\{[\s\S]*?\})(?=<end_function_call>|<tool_call\|>|$)/g)) {
    first = first < 0 ? (found.index ?? 0) : first;
    calls.push({ name: found[1] as string, args: (found[2] as string).replace(/<escape>|<\|"\|>/g, '"') });
  }
  if (calls.length > 0) {
    const opener = Math.max(text.lastIndexOf('<start_function_call>', first), text.lastIndexOf('<|tool_call>', first));
    return match(calls, opener >= 0 ? opener : first);
  }
  const fence = /```tool_code\s*([\s\S]*?)(?:```|$)/.exec(text);
  return fence ? match(parsePythonCalls(fence[1] as string) ?? [], fence.index) : null;
}

/** Archon's own text protocol: `Action: {"tool": NAME, "arguments": {…}}`. */
function archon(text: string): DialectMatch | null {
  const marker = /Action\s*:\s*(?:```(?:json)?\s*)?\{/i.exec(text);
  if (!marker) return null;
  const start = marker.index + marker[0].length - 1;
  return match(callsFromJson(looseJson(text.slice(start, balancedEnd(text, start)))), marker.index);
}

/** Bare JSON calls (Llama 3.x `{"name", "parameters"}`, xLAM lists), at the start of a line or in a ```json fence. */
function bareJson(text: string, list: boolean): DialectMatch | null {
  const opener = list ? /(?:^|\n|```(?:json)?\s*)\s*(\[\s*\{)/ : /(?:^|\n|```(?:json)?\s*)\s*(\{)/;
  const found = opener.exec(text);
  if (!found) return null;
  const at = found.index + found[0].length - (found[1] as string).length;
  return match(jsonSequence(text.slice(at)), found.index);
}

function pythonicList(text: string): DialectMatch | null {
  const found = /(?:^|\n|<\|python_start\|>)\s*\[\s*[A-Za-z_][\w.]*\(/.exec(text);
  if (!found) return null;
  const start = text.indexOf('[', found.index);
  return match(parsePythonCalls(text.slice(start, balancedEnd(text, start))) ?? [], found.index);
}

function pythonTag(text: string): DialectMatch | null {
  const at = text.indexOf('<|python_tag|>');
  if (at < 0) return null;
  const body = text.slice(at + '<|python_tag|>'.length).replace(/<\|eom_id\|>|<\|eot_id\|>/g, '');
  return match(body.trimStart().startsWith('{') ? jsonSequence(body) : (parsePythonCalls(body) ?? []), at);
}

function functionaryV3(text: string): DialectMatch | null {
  const calls: RawCall[] = [];
  let first = -1;
  for (const found of text.matchAll(/>>>\s*([\w.-]+)\s*\n([\s\S]*?)(?=>>>|$)/g)) {
    if (found[1] === 'all') continue;
    first = first < 0 ? (found.index ?? 0) : first;
    calls.push({ name: found[1] as string, args: (found[2] as string).trim() });
  }
  return match(calls, first);
}

function commandR(text: string): DialectMatch | null {
  const action = jsonBlocks(text, '<|START_ACTION|>', '<|END_ACTION|>');
  if (action) return action;
  const fenced = /Action:\s*```(?:json)?\s*(\[[\s\S]*?)(?:```|$)/.exec(text);
  return fenced ? match(callsFromJson(looseJson(fenced[1] as string)), fenced.index) : null;
}

export const DIALECTS: readonly Dialect[] = [
  { name: 'harmony', read: harmony },
  { name: 'kimi-k2', read: kimi },
  { name: 'deepseek', read: deepseek },
  { name: 'mistral', read: mistral },
  { name: 'functools', read: (text) => jsonBlocks(text, 'functools', '\u0000') },
  { name: 'nemotron', read: (text) => jsonBlocks(text, '<TOOLCALL>', '</TOOLCALL>') },
  { name: 'granite', read: (text) => jsonBlocks(text, '<|tool_call|>', '\u0000') ?? jsonBlocks(text, '<function_call>', '\u0000') },
  { name: 'lfm2', read: (text) => pythonBlocks(text, '<|tool_call_start|>', '<|tool_call_end|>') },
  { name: 'olmo', read: (text) => pythonBlocks(text, '<function_calls>', '</function_calls>') },
  { name: 'command-r', read: commandR },
  { name: 'minimax', read: minimax },
  { name: 'gemma', read: gemma },
  { name: 'python-tag', read: pythonTag },
  { name: 'qwen3-coder', read: (text) => functionTags(text, 'parameters') },
  { name: 'functionary-v3.1', read: (text) => functionTags(text, 'json') },
  { name: 'glm', read: glm },
  { name: 'hermes', read: (text) => jsonBlocks(text, '<tool_call>', '</tool_call>') },
  { name: 'archon', read: archon },
  { name: 'functionary-v3', read: functionaryV3 },
  { name: 'xlam', read: (text) => bareJson(text, true) },
  { name: 'pythonic', read: pythonicList },
  { name: 'llama3-json', read: (text) => bareJson(text, false) },
];
