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
  const unfenced = (body: string) => body.trim().replace(/^```(?:python|json)?\s*/, '').replace(/\s*```$/, '');
  return match(found.flatMap((block) => parsePythonCalls(unfenced(block.body)) ?? jsonSequence(block.body)), found[0]?.at ?? -1);
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
  const invokes = [...text.matchAll(/<invoke\s+name\s*=\s*["']([^"']+)["'][^>]*>([\s\S]*?)(?:<\/invoke>|$)/g)];
  if (invokes.length > 0) {
    const calls = invokes.map((found) => ({ name: found[1] as string, args: namedValues(found[2] as string, 'parameter'), textValues: true }));
    const first = invokes[0]?.index ?? 0;
    const wrapper = Math.max(text.lastIndexOf('<minimax:tool_call>', first), text.lastIndexOf('<function_calls>', first));
    return match(calls, wrapper >= 0 ? wrapper : first);
  }
  const found = blocks(text, '<tool_calls>', '</tool_calls>');
  return match(found.flatMap((block) => jsonSequence(block.body)), found[0]?.at ?? -1);
}

/** `<TAG name="k">v</TAG>` children as text values; a CDATA section is taken verbatim. */
function namedValues(body: string, tag: string): Record<string, string> {
  const args: Record<string, string> = {};
  const pattern = new RegExp(`<${tag}\\s+name\\s*=\\s*["']([^"']+)["'][^>]*>(?:<!\\[CDATA\\[([\\s\\S]*?)\\]\\]>\\s*(?=</${tag}>)|([\\s\\S]*?))(?:</${tag}>|$)`, 'g');
  for (const [, key, cdata, value] of body.matchAll(pattern)) args[key as string] = (cdata ?? value) as string;
  return args;
}

/** Every `<TAG name="NAME" …>body</TAG>` (an unclosed one runs to the end). */
function namedTags(text: string, tag: string): { name: string; body: string; at: number }[] {
  const pattern = new RegExp(`<${tag}\\s+name\\s*=\\s*["']([^"']+)["'][^>]*>([\\s\\S]*?)(?:</${tag}>|$)`, 'g');
  return [...text.matchAll(pattern)].map((found) => ({ name: (found[1] as string).trim(), body: found[2] as string, at: found.index ?? 0 }));
}

/** MiniCPM: `<function name="NAME"><param name="k">v</param></function>` (CDATA for multi-line values). */
function minicpm(text: string): DialectMatch | null {
  const found = namedTags(text, 'function').filter(({ body }) => body.trim() === '' || /^\s*<param\s/.test(body));
  return match(found.map(({ name, body }) => ({ name, args: namedValues(body, 'param'), textValues: true })), found[0]?.at ?? -1);
}

/** The function's name as an attribute: `<function name="NAME">{…}</function>`, `<tool_call name="NAME">…</tool_call>`, JSON or `<parameter name>` bodies. */
function xmlFunction(text: string): DialectMatch | null {
  const found = [...namedTags(text, 'function'), ...namedTags(text, 'tool_call')].sort((a, b) => a.at - b.at);
  const calls = found.flatMap(({ name, body }): RawCall[] => {
    const rest = body.trim();
    if (rest.startsWith('{')) return [{ name, args: rest.slice(0, balancedEnd(rest, 0)) }];
    if (rest === '' || /^<parameter\s/.test(rest)) return [{ name, args: namedValues(rest, 'parameter'), textValues: true }];
    return [];
  });
  const first = found[0]?.at ?? -1;
  const wrapper = first > 0 ? text.lastIndexOf('<tool_call>', first) : -1;
  return match(calls, wrapper >= 0 && text.slice(wrapper + '<tool_call>'.length, first).trim() === '' ? wrapper : first);
}

const DSML = '[|｜]DSML[|｜]';

/** One DSML parameter: `string="true"` is text, `string="false"` JSON; without the attribute the tool's schema decides. */
function dsmlValue(value: string, isString: string | undefined): unknown {
  if (isString !== 'false') return value;
  const parsed = looseJson(value.trim());
  return parsed === undefined ? value : parsed;
}

/** DeepSeek V3.2 / V4: `<｜DSML｜function_calls><｜DSML｜invoke name="f"><｜DSML｜parameter name="k" string="true">v</｜DSML｜parameter>…`. */
function deepseekDsml(text: string): DialectMatch | null {
  const invoke = new RegExp(`<${DSML}invoke\\s+name="([^"]+)"\\s*>([\\s\\S]*?)(?:</${DSML}invoke>|(?=<${DSML}invoke)|$)`, 'g');
  const parameter = new RegExp(`<${DSML}parameter\\s+name="([^"]+)"(?:\\s+string="(true|false)")?\\s*>([\\s\\S]*?)(?:</${DSML}parameter>|$)`, 'g');
  const invokes = [...text.matchAll(invoke)];
  const calls = invokes.map((found): RawCall => {
    const params = [...(found[2] as string).matchAll(parameter)];
    const args = Object.fromEntries(params.map(([, key, isString, value]) => [key as string, dsmlValue(value as string, isString)]));
    return { name: found[1] as string, args, textValues: params.some((param) => param[2] === undefined) };
  });
  const block = text.search(new RegExp(`<${DSML}(?:function_calls|tool_calls)>`));
  return match(calls, block >= 0 ? block : (invokes[0]?.index ?? -1));
}

/** GigaChat 3: `<|message_sep|>\n\nfunction call<|role_sep|>\n{json}`; GigaChat 3.1: `<|function_call|>{json}`. */
function gigachat(text: string): DialectMatch | null {
  const marker = /(?:<\|message_sep\|>\s*)?function call<\|role_sep\|>|<\|function_call\|>/.exec(text);
  if (!marker) return null;
  const body = text.slice(marker.index + marker[0].length);
  const start = body.search(/[[{]/);
  return start < 0 ? null : match(callsFromJson(looseJson(body.slice(start, balancedEnd(body, start)))), marker.index);
}

const asRecord = (value: unknown): Record<string, unknown> => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {});

/** A call keyed by its function's name, `{"NAME": {…arguments}}`, or an ordinary `{"name", "arguments"}` object. */
function keyedCalls(value: unknown): RawCall[] {
  const items = Array.isArray(value) ? value : [value];
  return items.flatMap((item): RawCall[] => {
    const ordinary = callsFromJson(item);
    if (ordinary.length > 0) return ordinary;
    const [only, ...more] = Object.entries(asRecord(item));
    return only && more.length === 0 ? [{ name: only[0], args: only[1] }] : [];
  });
}

/** Apertus: `<|tools_prefix|>[{"NAME": {…}}]<|tools_suffix|>`. */
function apertus(text: string): DialectMatch | null {
  const found = blocks(text, '<|tools_prefix|>', '<|tools_suffix|>');
  const calls = found.flatMap(({ body }) => {
    const start = body.search(/[[{]/);
    return start < 0 ? [] : keyedCalls(looseJson(body.slice(start, balancedEnd(body, start))));
  });
  return match(calls, found[0]?.at ?? -1);
}

/** Where a match that may begin with the line break before it really starts. */
const lineStart = (found: RegExpExecArray | RegExpMatchArray) => (found.index ?? 0) + (found[0].length - found[0].trimStart().length);

/** LangChain's ReAct agent: `Action: NAME` then `Action Input: …` (JSON, or plain text for the tool's one string parameter). */
function react(text: string): DialectMatch | null {
  const pattern = /(?:^|\n)[ \t]*Action[ \t]*:[ \t]*[`*]*([A-Za-z_][\w.-]*)[`*]*[ \t]*\r?\n+[ \t]*Action[ \t]*Input[ \t]*:[ \t]*([\s\S]*?)(?=\n[ \t]*(?:Observation|Thought|Action|Final Answer)[ \t]*:|$)/gi;
  const found = [...text.matchAll(pattern)];
  const first = found[0];
  if (!first) return reactBrackets(text);
  return match(found.map((call) => ({ name: call[1] as string, args: (call[2] as string).trim(), freeInput: true })), lineStart(first));
}


/** The ReAct paper's own form, `Action: NAME[input]`. */
function reactBrackets(text: string): DialectMatch | null {
  const found = /(?:^|\n)[ \t]*Action[ \t]*:[ \t]*([A-Za-z_][\w.-]*)\[([\s\S]*?)\][ \t]*(?=\r?\n|$)/i.exec(text);
  return found ? match([{ name: found[1] as string, args: (found[2] as string).trim(), freeInput: true }], lineStart(found)) : null;
}

/** Every JSON object in the text that starts with one of `keys` (e.g. `{"action": …`), with where it began. */
function objectsStartingWith(text: string, keys: string): { value: unknown; at: number }[] {
  const found: { value: unknown; at: number }[] = [];
  for (const opener of text.matchAll(new RegExp(`\\{\\s*["']?(?:${keys})["']?\\s*:`, 'g'))) {
    const at = opener.index ?? 0;
    if (found.length >= 64) break;
    found.push({ value: looseJson(text.slice(at, balancedEnd(text, at))), at });
  }
  return found;
}

const isFinalAction = (action: unknown) => typeof action === 'string' && /^final[ _]answer$/i.test(action.trim());

/** LangChain's JSON agents: `{"action": NAME, "action_input": {…} | "text"}`, usually in a ```json fence. */
function langchainJson(text: string): DialectMatch | null {
  const found = objectsStartingWith(text, 'action').flatMap(({ value, at }) => {
    const object = asRecord(value);
    if (typeof object.action !== 'string' || isFinalAction(object.action)) return [];
    const input = object.action_input ?? {};
    return [{ call: { name: object.action.trim(), args: input, freeInput: typeof input === 'string' }, at }];
  });
  const first = found[0]?.at ?? -1;
  const fence = first >= 0 ? text.lastIndexOf('```', first) : -1;
  return match(found.map(({ call }) => call), fence >= 0 && text.slice(fence, first).trim().replace(/^```(?:json)?/, '').trim() === '' ? fence : first);
}

/** A LangChain JSON agent's answer, `{"action": "Final Answer", "action_input": "…"}`; null when the text holds none. */
export function jsonAgentAnswer(text: string): string | null {
  for (const { value } of objectsStartingWith(text, 'action')) {
    const object = asRecord(value);
    if (isFinalAction(object.action)) return typeof object.action_input === 'string' ? object.action_input.trim() : JSON.stringify(object.action_input ?? '');
  }
  return null;
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

/** Llama 3.x with prose around its call: a `{"name": …, "parameters": {…}}` object inside a line. */
function llama3Json(text: string): DialectMatch | null {
  const atLineStart = bareJson(text, false);
  if (atLineStart) return atLineStart;
  for (const { value, at } of objectsStartingWith(text, 'name|type')) {
    const object = asRecord(value);
    // Inside prose only a whole call counts, its arguments given: not an echoed tool definition.
    const calls = 'parameters' in object || 'arguments' in object ? callsFromJson(object) : [];
    if (calls.length > 0) return match([...calls, ...jsonSequence(text.slice(balancedEnd(text, at)))], at);
  }
  return null;
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
  // The call ends at <|eom_id|> (or <|eot_id|>); prose may follow it on later lines.
  const body = (text.slice(at + '<|python_tag|>'.length).split(/<\|eom_id\|>|<\|eot_id\|>/)[0] as string).trim();
  if (body.startsWith('{')) return match(jsonSequence(body), at);
  return match(parsePythonCalls(body) ?? parsePythonCalls(body.split('\n')[0] as string) ?? [], at);
}

/** Functionary v3.2: `>>>NAME\n{…}` segments (`>>>all` is text); the prompt ends in `>>>`, so the first segment may come without it. */
function functionaryV3(text: string): DialectMatch | null {
  const calls: RawCall[] = [];
  let first = -1;
  const opened = /^\s*(?:all[ \t]*\r?\n|[\w.-]+[ \t]*\r?\n[ \t]*\{)/.test(text) && !/^\s*>>>/.test(text);
  const lead = text.length - text.trimStart().length;
  const body = opened ? `>>>${text.slice(lead)}` : text;
  const original = (index: number) => (opened ? Math.max(index - 3, 0) + lead : index);
  for (const found of body.matchAll(/>>>[ \t]*([\w.-]+)[ \t]*\r?\n([\s\S]*?)(?=>>>|$)/g)) {
    if (found[1] === 'all') continue;
    first = first < 0 ? original(found.index ?? 0) : first;
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
  { name: 'deepseek-dsml', read: deepseekDsml },
  { name: 'deepseek', read: deepseek },
  { name: 'mistral', read: mistral },
  { name: 'functools', read: (text) => jsonBlocks(text, 'functools', '\u0000') },
  { name: 'nemotron', read: (text) => jsonBlocks(text, '<TOOLCALL>', '</TOOLCALL>') },
  { name: 'granite', read: (text) => jsonBlocks(text, '<|tool_call|>', '\u0000') ?? jsonBlocks(text, '<function_call>', '\u0000') },
  { name: 'apertus', read: apertus },
  { name: 'gigachat', read: gigachat },
  { name: 'lfm2', read: (text) => pythonBlocks(text, '<|tool_call_start|>', '<|tool_call_end|>') },
  { name: 'olmo', read: (text) => pythonBlocks(text, '<function_calls>', '</function_calls>') },
  { name: 'command-r', read: commandR },
  { name: 'minimax', read: minimax },
  { name: 'minicpm', read: minicpm },
  { name: 'xml-function', read: xmlFunction },
  { name: 'gemma', read: gemma },
  { name: 'python-tag', read: pythonTag },
  { name: 'qwen3-coder', read: (text) => functionTags(text, 'parameters') },
  { name: 'functionary-v3.1', read: (text) => functionTags(text, 'json') },
  { name: 'glm', read: glm },
  { name: 'hermes', read: (text) => jsonBlocks(text, '<tool_call>', '</tool_call>') },
  { name: 'archon', read: archon },
  { name: 'react', read: react },
  { name: 'langchain-json', read: langchainJson },
  { name: 'functionary-v3', read: functionaryV3 },
  { name: 'xlam', read: (text) => bareJson(text, true) },
  { name: 'pythonic', read: pythonicList },
  { name: 'llama3-json', read: llama3Json },
];
