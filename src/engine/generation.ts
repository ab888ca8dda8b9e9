import type { ChatHistoryItem, ChatModelFunctions, LlamaChat, LlamaGrammar } from 'node-llama-cpp';
import { withoutNullOptionals } from './gbnf-schema';

/** What shapes the model's answer: free text (or JSON under a grammar), tool calls it may make, or one call it must make. */
export type AnswerMode =
  | { kind: 'text'; grammar: LlamaGrammar | null; schema?: unknown }
  | { kind: 'functions'; functions: ChatModelFunctions; schemas: Record<string, unknown> }
  | { kind: 'call'; grammar: LlamaGrammar; schemas: Record<string, unknown> };

export interface Generation {
  history: ChatHistoryItem[];
  mode: AnswerMode;
  maxTokens: number;
  temperature: number;
  topP: number;
  topK: number;
  minP: number;
  seed?: number;
  stop: string[];
}

export interface GeneratedCall {
  id: string;
  name: string;
  arguments: string;
}

export interface Generated {
  content: string;
  calls: GeneratedCall[];
  finishReason: 'stop' | 'length' | 'tool_calls';
  promptTokens: number;
  completionTokens: number;
  aborted: boolean;
}

/** Told of the answer as it is made: text, and each tool call's name then its argument fragments. */
export interface GenerationListener {
  onText(text: string): void;
  onCallStart(index: number, call: { id: string; name: string }): void;
  onCallArguments(index: number, fragment: string): void;
  /** A token was made that is not sent yet (a call under a grammar is announced once whole). */
  onProgress(): void;
}

let callCounter = 0;
const callId = () => `call_${Date.now().toString(36)}${(callCounter++).toString(36)}`;

/** A call's arguments as their schema means them: the optional properties the grammar made null left out. */
const argumentsOf = (params: unknown, schema: unknown) => JSON.stringify(withoutNullOptionals(params ?? {}, schema));

/** A forced call's JSON (`{"name", "arguments"}`, the grammar's shape) as a tool call. */
function forcedCall(text: string, schemas: Record<string, unknown>): GeneratedCall | null {
  try {
    const parsed = JSON.parse(text) as { name?: unknown; arguments?: unknown };
    return typeof parsed.name === 'string' ? { id: callId(), name: parsed.name, arguments: argumentsOf(parsed.arguments, schemas[parsed.name]) } : null;
  } catch {
    return null;
  }
}

/** JSON written under a response schema, as the schema means it; other text as it is. */
function schemaAnswer(text: string, schema: unknown): string {
  try {
    return JSON.stringify(withoutNullOptionals(JSON.parse(text), schema));
  } catch {
    return text;
  }
}

type ChatResponse = Awaited<ReturnType<LlamaChat['generateResponse']>>;

/** What is sent whole at the end (a call, JSON under a schema: its nulls are taken out first) only shows progress while it is made. */
const sentWhole = (mode: AnswerMode) => mode.kind === 'call' || (mode.kind === 'text' && mode.schema !== undefined);

/** node-llama-cpp's answer, or null when the client went before the first token (it then throws the signal's reason). */
async function respond(chat: LlamaChat, generation: Generation, listener: GenerationListener, signal: AbortSignal): Promise<ChatResponse | null> {
  const { mode } = generation;
  const sampling = { maxTokens: generation.maxTokens, temperature: generation.temperature, topP: generation.topP, topK: generation.topK, minP: generation.minP, seed: generation.seed, customStopTriggers: generation.stop.length > 0 ? generation.stop : undefined };
  // No repeat penalty, as llama.cpp's server defaults (node-llama-cpp's chat turns one on).
  const common = { ...sampling, repeatPenalty: false as const, signal, stopOnAbortSignal: true, onTextChunk: sentWhole(mode) ? () => listener.onProgress() : (text: string) => listener.onText(text) };
  try {
    return mode.kind === 'functions'
      ? await chat.generateResponse(generation.history, { ...common, functions: mode.functions, onFunctionCallParamsChunk: () => listener.onProgress() })
      : await chat.generateResponse(generation.history, { ...common, grammar: mode.grammar ?? undefined });
  } catch (error) {
    if (!signal.aborted) throw error;
    return null;
  }
}

/** The calls the model made, each announced once whole: the one a grammar forced, or those node-llama-cpp parsed. */
function callsOf(mode: AnswerMode, response: ChatResponse | null, listener: GenerationListener): GeneratedCall[] {
  if (!response || mode.kind === 'text') return [];
  const calls =
    mode.kind === 'call'
      ? [forcedCall(response.response, mode.schemas)].filter((call): call is GeneratedCall => call !== null)
      : (response.functionCalls ?? []).map((call) => ({ id: callId(), name: call.functionName, arguments: argumentsOf(call.params, mode.schemas[call.functionName]) }));
  calls.forEach((call, index) => {
    listener.onCallStart(index, call);
    listener.onCallArguments(index, call.arguments);
  });
  return calls;
}

/** The answer's text: none beside a forced call; JSON under a schema cleaned and sent now, as it was held back. */
function contentOf(mode: AnswerMode, response: ChatResponse | null, calls: GeneratedCall[], listener: GenerationListener, aborted: boolean): string {
  const text = response?.response ?? '';
  if (mode.kind === 'call' && calls.length > 0) return '';
  if (mode.kind !== 'text' || mode.schema === undefined || aborted) return text;
  const cleaned = schemaAnswer(text, mode.schema);
  listener.onText(cleaned);
  return cleaned;
}

/**
 * One answer from one sequence. The signal is the client's connection: when it goes, the generation
 * stops at the next token and what was made so far is counted.
 */
export async function generate(chat: LlamaChat, generation: Generation, listener: GenerationListener, signal: AbortSignal): Promise<Generated> {
  const sequence = chat.sequence;
  const before = sequence.tokenMeter.getState();
  const response = await respond(chat, generation, listener, signal);
  const completionTokens = sequence.tokenMeter.diff(before).usedOutputTokens;
  // What the sequence holds after the answer, less the answer: the prompt as the template rendered it.
  const promptTokens = Math.max(0, sequence.contextTokens.length - completionTokens);
  const aborted = signal.aborted || response?.metadata.stopReason === 'abort';
  const calls = aborted ? [] : callsOf(generation.mode, response, listener);
  const content = contentOf(generation.mode, response, calls, listener, aborted);
  const finishReason = calls.length > 0 ? 'tool_calls' : response?.metadata.stopReason === 'maxTokens' ? 'length' : 'stop';
  return { content, calls, finishReason, promptTokens, completionTokens, aborted };
}
