import { z } from 'zod';
import { describeZodError } from '../../shared/errors';
import type { ChatMessage, ChatRequest, ChatResponse, ModelMode, ToolCallRequest, ToolSpec } from '../model/chat';
import type { DialectName } from '../model/dialects/dialect-names';
import { readToolCalls } from '../model/dialects/read-tool-calls';
import { extractFirstJsonObject, parseLenientJson } from '../model/lenient-json';

/** One request for the answer, made by the caller through the run's gate (callModel bound to a purpose and step). */
export type StructuredChat = (request: Pick<ChatRequest, 'messages' | 'tools' | 'toolChoice' | 'responseSchema'>) => Promise<ChatResponse>;

export interface StructuredTool<S extends z.ZodType> {
  name: string;
  description: string;
  /** The answer's shape: the tool's JSON Schema is derived from it and every answer is checked against it. */
  schema: S;
}

/** What a caller's own checks make of a schema-valid answer: the value to return, or what is wrong with it. */
export type Checked<T> = { ok: true; value: T } | { ok: false; errors: string[] };

export interface StructuredRequest<S extends z.ZodType, T> {
  tool: StructuredTool<S>;
  /** What the answer is called when Archon tells the model what was wrong ("plan", "verdict", "lessons"). */
  noun: string;
  plural?: boolean;
  /** Text mode's answer line, `Label: {…}`: the object after it is read, else the first object in the reply. */
  label?: string;
  /** Only an object after the label counts (a critic judges results that may hold JSON of their own). */
  labelRequired?: boolean;
  mode: ModelMode;
  messages: readonly ChatMessage[];
  /** How many times an unreadable or refused answer goes back to the model before the answer is given up. */
  maxRepairs: number;
  /** Applied to the answer's JSON before the schema check (defaults the model may leave out). */
  prepare?: (json: unknown) => unknown;
  /** Checks beyond the schema; their errors go back to the model like the schema's. */
  check?: (value: z.output<S>) => Checked<T>;
  /** Told when a text-mode answer came as the tool's call in the model's own dialect. */
  onDialect?: (dialect: DialectName) => void;
}

export type StructuredAnswer<T> =
  | { ok: true; value: T; response: ChatResponse }
  /** `error`: what was wrong with the last answer, in the words the model was told. */
  | { ok: false; error: string; response: ChatResponse; attempts: number };

/** The tool a structured answer is submitted through, its parameters the schema's JSON Schema (as the model writes it: input side). */
function structuredToolSpec(tool: StructuredTool<z.ZodType>): ToolSpec {
  return { name: tool.name, description: tool.description, parameters: z.toJSONSchema(tool.schema, { io: 'input' }) as Record<string, unknown> };
}

function words(request: StructuredRequest<z.ZodType, unknown>) {
  const { noun, plural = false } = request;
  return { noun, was: plural ? 'were' : 'was', is: plural ? 'are' : 'is', does: plural ? 'do' : 'does', its: plural ? 'their' : 'its' };
}

function missing(request: StructuredRequest<z.ZodType, unknown>): string {
  const { noun, was } = words(request);
  if (request.label) return `No ${noun} ${was} found. Answer with ${request.tool.name} (or a line "${request.label}: {…}").`;
  if (request.mode === 'native') return `No ${noun} ${was} submitted. Call ${request.tool.name} with the ${noun}.`;
  return `No JSON object was found in your reply. Reply with the ${noun} as one JSON object.`;
}

/** The JSON written as text: after the label when there is one, else (unless the label is required) the first object. */
function writtenObject(content: string, request: StructuredRequest<z.ZodType, unknown>): string | null {
  const marker = request.label ? new RegExp(`${request.label}\\s*:`, 'i').exec(content) : null;
  if (marker) return extractFirstJsonObject(content, marker.index);
  return request.label && request.labelRequired ? null : extractFirstJsonObject(content);
}

/**
 * The answer's JSON text. A call of the tool is in `toolCalls` whenever the tool was offered (native
 * mode): the model client has read the model's own dialect into it already. In text mode nothing was
 * offered, so a call in the model's dialect is read here; else the object written as text. The
 * client has moved reasoning out of the content either way.
 */
function answerText(response: ChatResponse, request: StructuredRequest<z.ZodType, unknown>, spec: ToolSpec): string | null {
  const call = response.toolCalls.find((toolCall) => toolCall.name === spec.name);
  if (call) return call.arguments;
  if (request.mode === 'text') {
    const written = readToolCalls(response.content, [spec], { reasoning: response.reasoning });
    const [first] = written?.calls ?? [];
    if (written && first) {
      request.onDialect?.(written.dialect);
      return first.arguments;
    }
  }
  // Text mode asks for the schema as the whole answer (a grammar where the server has one): a reply that is one object is it.
  return writtenObject(response.content, request) ?? (request.mode === 'text' && response.content.trim().startsWith('{') ? extractFirstJsonObject(response.content) : null);
}

/** The request for the answer: the tool, and a call of it required (native); the schema as the answer's format (text). */
function structuredRequest(messages: ChatMessage[], mode: ModelMode, spec: ToolSpec): Parameters<StructuredChat>[0] {
  if (mode === 'native') return { messages, tools: [spec], toolChoice: 'required' };
  return { messages, responseSchema: { name: spec.name, schema: spec.parameters } };
}

function readAnswer<S extends z.ZodType, T>(response: ChatResponse, request: StructuredRequest<S, T>, spec: ToolSpec): { ok: true; value: T } | { ok: false; error: string } {
  const { noun, is, does, its, was } = words(request);
  const text = answerText(response, request, spec);
  if (text === null) return { ok: false, error: missing(request) };
  const json = parseLenientJson(text);
  if (!json.ok) return { ok: false, error: `The ${noun} ${is} not valid JSON (${json.error}).` };
  const parsed = request.tool.schema.safeParse(request.prepare ? request.prepare(json.value) : json.value);
  if (!parsed.success) return { ok: false, error: `The ${noun} ${does} not match ${its} schema: ${describeZodError(parsed.error)}.` };
  const checked = request.check ? request.check(parsed.data) : { ok: true as const, value: parsed.data as T };
  return checked.ok ? checked : { ok: false, error: `The ${noun} ${was} refused: ${checked.errors.join(' ')}` };
}

/** What goes back after an answer that could not be used: the tool's result when it came as a call, else a user message. */
function feedback(response: ChatResponse, call: ToolCallRequest | undefined, message: string): ChatMessage[] {
  if (call) return [{ role: 'assistant', content: response.content || null, toolCalls: [call] }, { role: 'tool', toolCallId: call.id, content: message }];
  return [{ role: 'assistant', content: response.content }, { role: 'user', content: message }];
}

/**
 * Asks the model for an answer of the tool's schema: a call of the tool (native, or in the model's
 * own dialect), or in text mode the JSON after the label, read leniently (jsonrepair). An answer that
 * cannot be read, breaks the schema or fails the caller's check goes back saying why, at most
 * `maxRepairs` times; every request goes through the caller's `chat`, so through the run's gate.
 */
export async function askStructured<S extends z.ZodType, T = z.output<S>>(chat: StructuredChat, request: StructuredRequest<S, T>): Promise<StructuredAnswer<T>> {
  const spec = structuredToolSpec(request.tool);
  const messages = [...request.messages];
  const again = `Submit the ${request.noun} again.`;
  for (let attempt = 1; ; attempt++) {
    const response = await chat(structuredRequest(messages, request.mode, spec));
    const read = readAnswer(response, request, spec);
    if (read.ok) return { ok: true, value: read.value, response };
    if (attempt > request.maxRepairs) return { ok: false, error: read.error, response, attempts: attempt };
    const call = response.toolCalls.find((toolCall) => toolCall.name === spec.name) ?? response.toolCalls[0];
    messages.push(...feedback(response, call, `${read.error} ${again}`));
  }
}
