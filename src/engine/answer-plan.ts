import type { ChatHistoryItem, ChatModelFunctions, GbnfJsonSchema } from 'node-llama-cpp';
import { toChatHistory } from './chat-history';
import type { ChatRequest, WireTool } from './chat-request';
import { toGbnfJsonSchema } from './gbnf-schema';
import type { AnswerMode, Generation } from './generation';
import type { Grammars } from './grammars';
import { RequestError } from './request-error';

const parametersOf = (tool: WireTool): GbnfJsonSchema => toGbnfJsonSchema(tool.function.parameters ?? { type: 'object', properties: {} });
const schemasOf = (tools: WireTool[]): Record<string, unknown> => Object.fromEntries(tools.map((tool) => [tool.function.name, tool.function.parameters ?? {}]));

/** The tools a `required` or named `tool_choice` leaves the model, which must call one of them. */
function forcedTools(request: ChatRequest, tools: WireTool[]): WireTool[] | null {
  const choice = request.tool_choice;
  if (choice === 'required') return tools;
  if (typeof choice !== 'object') return null;
  const named = tools.filter((tool) => tool.function.name === choice.function.name);
  if (named.length === 0) throw new RequestError(400, 'invalid_request_error', `tool_choice names the function ${choice.function.name}, which is not among the tools`);
  return named;
}

/** The tools described in the system message, for a call made under a grammar rather than the template's own function syntax. */
function withCallInstructions(history: ChatHistoryItem[], tools: WireTool[]): ChatHistoryItem[] {
  const described = tools.map((tool) => `- ${tool.function.name}: ${tool.function.description ?? ''}\n  parameters: ${JSON.stringify(tool.function.parameters ?? {})}`).join('\n');
  const instructions = `Answer by calling one of these tools, as a JSON object {"name": TOOL, "arguments": {...}}:\n${described}`;
  const [first, ...rest] = history;
  if (first?.type === 'system' && typeof first.text === 'string') return [{ type: 'system', text: `${first.text}\n\n${instructions}` }, ...rest];
  return [{ type: 'system', text: instructions }, ...history];
}

async function answerMode(request: ChatRequest, grammars: Grammars): Promise<{ mode: AnswerMode; forced: WireTool[] | null }> {
  const tools = request.tool_choice === 'none' ? [] : (request.tools ?? []);
  const forced = tools.length > 0 ? forcedTools(request, tools) : null;
  if (forced) {
    const calls = forced.map((tool) => ({ type: 'object' as const, properties: { name: { const: tool.function.name }, arguments: parametersOf(tool) } }));
    return { mode: { kind: 'call', grammar: await grammars.forSchema(calls.length === 1 ? (calls[0] as GbnfJsonSchema) : { oneOf: calls }), schemas: schemasOf(forced) }, forced };
  }
  // With tools the model may call, the template's function syntax decides; a response_format then shapes nothing (node-llama-cpp takes a grammar or functions, not both).
  if (tools.length > 0) {
    const functions: ChatModelFunctions = Object.fromEntries(tools.map((tool) => [tool.function.name, { description: tool.function.description, params: parametersOf(tool) }]));
    return { mode: { kind: 'functions', functions, schemas: schemasOf(tools) }, forced: null };
  }
  const format = request.response_format;
  if (format?.type === 'json_schema' && format.json_schema.schema) return { mode: { kind: 'text', grammar: await grammars.forSchema(toGbnfJsonSchema(format.json_schema.schema)), schema: format.json_schema.schema }, forced: null };
  if (format?.type === 'json_object' || format?.type === 'json_schema') return { mode: { kind: 'text', grammar: await grammars.anyJson() }, forced: null };
  return { mode: { kind: 'text', grammar: null }, forced: null };
}

/** Sampling when the request does not say: llama.cpp's server defaults, which Ollama shares (node-llama-cpp's own default is greedy). */
const DEFAULT_SAMPLING = { temperature: 0.8, topP: 0.95, topK: 40, minP: 0.05 };

/** The request as one generation: the chat history, what shapes the answer, and its sampling, bounded by the context. */
export async function planGeneration(request: ChatRequest, grammars: Grammars, contextSize: number): Promise<Generation> {
  const { mode, forced } = await answerMode(request, grammars);
  const history = toChatHistory(request.messages);
  const stop = request.stop ?? [];
  return {
    history: forced ? withCallInstructions(history, forced) : history,
    mode,
    maxTokens: Math.min(request.max_completion_tokens ?? request.max_tokens ?? contextSize, contextSize),
    temperature: request.temperature ?? DEFAULT_SAMPLING.temperature,
    topP: request.top_p ?? DEFAULT_SAMPLING.topP,
    topK: DEFAULT_SAMPLING.topK,
    minP: DEFAULT_SAMPLING.minP,
    seed: request.seed ?? undefined,
    stop: typeof stop === 'string' ? [stop] : stop,
  };
}
