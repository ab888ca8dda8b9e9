import type { DialectName } from './dialects/dialect-names';

/** The runtime's own view of a chat exchange; model-client.ts maps it to the OpenAI wire format. */
export interface ToolCallRequest {
  id: string;
  name: string;
  /** Raw JSON text as the model sent it; it may be malformed. */
  arguments: string;
}

export type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  /** `reasoning`: what a text-mode model wrote in the server's reasoning field, kept so a resumed step reads its calls the same way (never sent back). */
  | { role: 'assistant'; content: string | null; toolCalls?: ToolCallRequest[]; reasoning?: string }
  | { role: 'tool'; toolCallId: string; content: string };

export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** Native tool calls, or the text protocol for servers without them (docs/model-protocol.md). */
export type ModelMode = 'native' | 'text';

/** Why a request is made; sent as the X-Archon-Purpose header and recorded with the call. */
export type ChatPurpose = 'probe' | 'contract' | 'plan' | 'replan' | 'step' | 'final' | 'critic' | 'outcome' | 'summary' | 'lessons';

export interface ChatRequest {
  purpose: ChatPurpose;
  messages: ChatMessage[];
  tools?: ToolSpec[];
  /** `required`: the answer must be a call of an offered tool (a grammar-constrained call where the server has one). */
  toolChoice?: 'required';
  /** The answer must be JSON of this schema (`response_format: json_schema`, a grammar where the server has one). */
  responseSchema?: { name: string; schema: Record<string, unknown> };
  maxTokens?: number;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  /** True when the server reported none and the numbers are estimates. */
  estimated: boolean;
}

export interface ChatResponse {
  content: string;
  toolCalls: ToolCallRequest[];
  /** What the model thought (a reasoning field or `<think>` text), apart from its content; empty when it said nothing of it. */
  reasoning: string;
  /** Set when the tool calls were read from text the model wrote in its own dialect. */
  dialect?: DialectName;
  usage: Usage;
  attempts: number;
}

export interface ChatOptions {
  signal: AbortSignal;
  /** Told about every attempt, failed ones included: retried attempts count toward usage. */
  onAttempt?: (attempt: AttemptRecord) => void;
}

export interface AttemptRecord {
  attempt: number;
  ok: boolean;
  usage: Usage;
  error?: string;
}

export interface ModelClient {
  readonly baseUrl: string;
  readonly model: string;
  chat(request: ChatRequest, options: ChatOptions): Promise<ChatResponse>;
}

/** About four characters a token: good enough to budget with when the server reports no usage. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
