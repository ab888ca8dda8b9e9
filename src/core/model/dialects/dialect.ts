import type { DialectName } from './dialect-names';
import type { ToolSpec } from '../chat';
import { parseLenientJson } from '../lenient-json';

/** A tool as the request offered it: only these names count as calls. */
export type OfferedTool = Pick<ToolSpec, 'name'> & { parameters?: Record<string, unknown> };

/** A call as a dialect wrote it, before its name is checked and its arguments typed. */
export interface RawCall {
  name: string;
  /** An object, JSON text, or (with `textValues`) an object of XML-style text values. */
  args: unknown;
  /** Values arrived as bare text (`<parameter=k>v</parameter>`); the tool's schema types them. */
  textValues?: boolean;
  /**
   * The arguments are an agent's free-form input (LangChain's `Action Input:` or `action_input`):
   * JSON when it is an object, else text for the tool's one required string parameter.
   */
  freeInput?: boolean;
}

/** What one dialect found: its calls and where in the text the call markup began. */
export interface DialectMatch {
  calls: RawCall[];
  at: number;
}

export interface Dialect {
  name: DialectName;
  read(text: string): DialectMatch | null;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** JSON text, repaired (jsonrepair: Python literals, single quotes, trailing commas…); undefined when unreadable. */
export function looseJson(text: string): unknown {
  const parsed = parseLenientJson(text);
  return parsed.ok ? parsed.value : undefined;
}

function nameOf(object: Record<string, unknown>): string | null {
  for (const key of ['name', 'tool', 'tool_name', 'function', 'function_name']) {
    const value = object[key];
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
    if (isRecord(value) && typeof value.name === 'string') return value.name;
  }
  return null;
}

function argsOf(object: Record<string, unknown>): unknown {
  if (isRecord(object.function) && 'arguments' in object.function) return object.function.arguments;
  for (const key of ['arguments', 'parameters', 'args', 'input']) if (key in object) return object[key];
  return {};
}

/** Calls in a JSON value: one call object, or a list of them ({name|tool|tool_name, arguments|parameters}). */
export function callsFromJson(value: unknown): RawCall[] {
  const items = Array.isArray(value) ? value : [value];
  return items.flatMap((item) => {
    if (!isRecord(item)) return [];
    const name = nameOf(item);
    return name ? [{ name, args: argsOf(item) }] : [];
  });
}

function propertySchema(tool: OfferedTool, key: string): Record<string, unknown> | undefined {
  const properties = tool.parameters?.properties;
  return isRecord(properties) && isRecord(properties[key]) ? properties[key] : undefined;
}

function wantsString(schema: Record<string, unknown> | undefined): boolean {
  const type = schema?.type;
  return type === 'string' || (Array.isArray(type) && type.includes('string') && !type.includes('object') && !type.includes('array'));
}

/** A bare text value typed by the tool's schema: text for string properties, JSON for the rest. */
function typedValue(tool: OfferedTool, key: string, raw: string): unknown {
  const text = raw.replace(/^\r?\n/, '').replace(/\r?\n$/, '');
  const schema = propertySchema(tool, key);
  if (wantsString(schema)) return text;
  try {
    return JSON.parse(text);
  } catch {
    if (!schema) return text;
    const repaired = looseJson(text);
    return repaired === undefined ? text : repaired;
  }
}

/** The tool's one string parameter that a free-form input fills: its only required string, else its only property when that is a string. */
function soleStringParameter(tool: OfferedTool): string | null {
  const properties = isRecord(tool.parameters?.properties) ? tool.parameters.properties : {};
  const required = Array.isArray(tool.parameters?.required) ? tool.parameters.required.filter((key): key is string => typeof key === 'string') : [];
  const strings = (keys: string[]) => keys.filter((key) => wantsString(propertySchema(tool, key)));
  const candidates = required.length > 0 ? strings(required) : Object.keys(properties).length === 1 ? strings(Object.keys(properties)) : [];
  return candidates.length === 1 ? (candidates[0] as string) : null;
}

/** A free-form input: a JSON object as is, else its text (a JSON string unquoted) as the tool's one string parameter. */
function freeInputArgs(input: unknown, tool: OfferedTool): unknown {
  if (typeof input !== 'string') return input;
  const text = input.trim().replace(/^```(?:json)?\s*/, '').replace(/\s*```$/, '').trim();
  if (text.startsWith('{')) return text;
  const key = soleStringParameter(tool);
  if (!key) return text;
  let value = text;
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'string') value = parsed;
  } catch {
    // Plain text, as agents write it: `Action Input: 6*7` (single quotes or backticks around it dropped).
    value = /^(['`])[\s\S]*\1$/.test(text) && text.length > 1 ? text.slice(1, -1) : text;
  }
  return { [key]: value };
}

/** The call's arguments as JSON text; text that cannot be read is passed on for the step to report. */
export function argumentsText(call: RawCall, tool: OfferedTool): string {
  let args = call.freeInput ? freeInputArgs(call.args, tool) : call.args;
  if (typeof args === 'string') {
    if (args.trim() === '') return '{}';
    const parsed = looseJson(args);
    if (parsed === undefined) return args;
    args = parsed;
  }
  if (args === undefined || args === null) return '{}';
  if (call.textValues && isRecord(args)) {
    args = Object.fromEntries(Object.entries(args).map(([key, value]) => [key, typeof value === 'string' ? typedValue(tool, key, value) : value]));
  }
  return JSON.stringify(args);
}
