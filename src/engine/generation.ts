import type { ChatHistoryItem, ChatModelFunctions, LlamaChat, LlamaGrammar } from 'node-llama-cpp';

/** What shapes the model's answer: free text (or JSON under a grammar), tool calls it may make, or one call it must make. */
export type AnswerMode = { kind: 'text'; grammar: LlamaGrammar | null } | { kind: 'functions'; functions: ChatModelFunctions } | { kind: 'call'; grammar: LlamaGrammar };

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
}

let callCounter = 0;
const callId = () => `call_${Date.now().toString(36)}${(callCounter++).toString(36)}`;

/** A forced call's JSON (`{"name", "arguments"}`, the grammar's shape) as a tool call. */
function forcedCall(text: string): GeneratedCall | null {
  try {
    const parsed = JSON.parse(text) as { name?: unknown; arguments?: unknown };
    return typeof parsed.name === 'string' ? { id: callId(), name: parsed.name, arguments: JSON.stringify(parsed.arguments ?? {}) } : null;
  } catch {
    return null;
  }
}

/** Streams function-call fragments as tool-call deltas, one id per call. */
function callStreamer(listener: GenerationListener) {
  const ids = new Map<number, string>();
  return {
    ids,
    onChunk(chunk: { callIndex: number; functionName: string; paramsChunk: string }) {
      if (!ids.has(chunk.callIndex)) {
        const id = callId();
        ids.set(chunk.callIndex, id);
        listener.onCallStart(chunk.callIndex, { id, name: chunk.functionName });
      }
      if (chunk.paramsChunk) listener.onCallArguments(chunk.callIndex, chunk.paramsChunk);
    },
  };
}

type ChatResponse = Awaited<ReturnType<LlamaChat['generateResponse']>>;

/** node-llama-cpp's answer, or null when the client went before the first token (it then throws the signal's reason). */
async function respond(chat: LlamaChat, generation: Generation, listener: GenerationListener, streamer: ReturnType<typeof callStreamer>, signal: AbortSignal): Promise<ChatResponse | null> {
  const { mode } = generation;
  const sampling = { maxTokens: generation.maxTokens, temperature: generation.temperature, topP: generation.topP, topK: generation.topK, minP: generation.minP, seed: generation.seed, customStopTriggers: generation.stop.length > 0 ? generation.stop : undefined };
  // No repeat penalty, as llama.cpp's server defaults (node-llama-cpp's chat turns one on).
  const common = { ...sampling, repeatPenalty: false as const, signal, stopOnAbortSignal: true, onTextChunk: mode.kind === 'call' ? undefined : (text: string) => listener.onText(text) };
  try {
    return mode.kind === 'functions'
      ? await chat.generateResponse(generation.history, { ...common, functions: mode.functions, onFunctionCallParamsChunk: (chunk) => streamer.onChunk(chunk) })
      : await chat.generateResponse(generation.history, { ...common, grammar: mode.grammar ?? undefined });
  } catch (error) {
    if (!signal.aborted) throw error;
    return null;
  }
}

/** The calls the model made: the one a grammar forced (announced once whole), or those node-llama-cpp parsed (announced whole when not streamed). */
function callsOf(mode: AnswerMode, response: ChatResponse | null, listener: GenerationListener, streamed: Map<number, string>): GeneratedCall[] {
  if (!response) return [];
  if (mode.kind === 'call') {
    const call = forcedCall(response.response);
    if (call) {
      listener.onCallStart(0, call);
      listener.onCallArguments(0, call.arguments);
    }
    return call ? [call] : [];
  }
  return (response.functionCalls ?? []).map((call, index) => {
    const made = { id: streamed.get(index) ?? callId(), name: call.functionName, arguments: JSON.stringify(call.params ?? {}) };
    if (!streamed.has(index)) {
      listener.onCallStart(index, made);
      listener.onCallArguments(index, made.arguments);
    }
    return made;
  });
}

/**
 * One answer from one sequence. The signal is the client's connection: when it goes, the generation
 * stops at the next token and what was made so far is counted.
 */
export async function generate(chat: LlamaChat, generation: Generation, listener: GenerationListener, signal: AbortSignal): Promise<Generated> {
  const sequence = chat.sequence;
  const before = sequence.tokenMeter.getState();
  const streamer = callStreamer(listener);
  const response = await respond(chat, generation, listener, streamer, signal);
  const completionTokens = sequence.tokenMeter.diff(before).usedOutputTokens;
  // What the sequence holds after the answer, less the answer: the prompt as the template rendered it.
  const promptTokens = Math.max(0, sequence.contextTokens.length - completionTokens);
  const aborted = signal.aborted || response?.metadata.stopReason === 'abort';
  const calls = aborted ? [] : callsOf(generation.mode, response, listener, streamer.ids);
  const content = generation.mode.kind === 'call' && calls.length > 0 ? '' : (response?.response ?? '');
  const finishReason = calls.length > 0 ? 'tool_calls' : response?.metadata.stopReason === 'maxTokens' ? 'length' : 'stop';
  return { content, calls, finishReason, promptTokens, completionTokens, aborted };
}
