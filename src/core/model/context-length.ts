/**
 * How many tokens the served model takes, asked of the server the way each kind reports it
 * (docs/model-protocol.md, "Context length"); the first that answers wins.
 */

export interface ContextLength {
  contextLength: number | null;
  /** Where the number came from, shown with the probe result. */
  contextSource: string | null;
  parallelSlots: number | null;
}

export interface ContextLengthQuery {
  baseUrl: string;
  model: string;
  /** The entry of GET /v1/models for the model, as the server sent it (vLLM adds max_model_len). */
  listed: Record<string, unknown> | undefined;
  /** The operator's setting, for servers that do not say. */
  configured: number | null;
  signal: AbortSignal;
  /** What sends the requests (the probe's, which records each one); the built-in fetch when absent. */
  fetch?: typeof fetch;
}

/** Ollama's context when neither the model nor the operator sets num_ctx (OLLAMA_CONTEXT_LENGTH's default). */
export const OLLAMA_DEFAULT_CONTEXT = 4096;

const positive = (value: unknown): number | null => (typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : null);

async function getJson(query: ContextLengthQuery, url: string, init: RequestInit = {}): Promise<Record<string, unknown> | null> {
  try {
    const response = await (query.fetch ?? fetch)(url, { ...init, signal: AbortSignal.any([query.signal, AbortSignal.timeout(2000)]) });
    if (!response.ok) return null;
    const body: unknown = await response.json();
    return body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const rootOf = (baseUrl: string) => baseUrl.replace(/\/v1\/?$/, '');

/** llama.cpp's server: /props, beside /v1, with the slots it runs in parallel. */
async function fromLlamaCpp(query: ContextLengthQuery): Promise<ContextLength | null> {
  const props = await getJson(query, `${rootOf(query.baseUrl)}/props`);
  const settings = props?.default_generation_settings as Record<string, unknown> | undefined;
  const contextLength = positive(settings?.n_ctx);
  if (!props || contextLength === null) return null;
  return { contextLength, contextSource: 'llama.cpp /props n_ctx', parallelSlots: positive(props.total_slots) };
}

/** The num_ctx line of Ollama's Modelfile parameters ("num_ctx 8192"). */
function numCtxOf(parameters: unknown): number | null {
  if (typeof parameters !== 'string') return null;
  const match = /^\s*num_ctx\s+(\d+)\s*$/m.exec(parameters);
  return match ? positive(Number(match[1])) : null;
}

/** Ollama: /api/show gives the model's own maximum and the num_ctx its Modelfile sets; without one, the server default applies. */
async function fromOllama(query: ContextLengthQuery): Promise<ContextLength | null> {
  const shown = await getJson(query, `${rootOf(query.baseUrl)}/api/show`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: query.model }) });
  if (!shown || typeof shown.model_info !== 'object' || shown.model_info === null) return null;
  const info = shown.model_info as Record<string, unknown>;
  const trained = Object.entries(info).find(([key]) => key.endsWith('.context_length'))?.[1];
  const maximum = positive(trained);
  const numCtx = numCtxOf(shown.parameters);
  const cap = (value: number) => (maximum === null ? value : Math.min(value, maximum));
  if (numCtx !== null) return { contextLength: cap(numCtx), contextSource: 'Ollama /api/show num_ctx', parallelSlots: null };
  if (query.configured !== null) return { contextLength: cap(query.configured), contextSource: 'the contextLength setting', parallelSlots: null };
  return { contextLength: cap(OLLAMA_DEFAULT_CONTEXT), contextSource: `Ollama default (the model allows ${maximum ?? 'unknown'}; set OLLAMA_CONTEXT_LENGTH and the contextLength setting to use more)`, parallelSlots: null };
}

/** LM Studio: /api/v0/models lists each model with the context it was loaded with. */
async function fromLmStudio(query: ContextLengthQuery): Promise<ContextLength | null> {
  const listing = await getJson(query, `${rootOf(query.baseUrl)}/api/v0/models`);
  const entries = Array.isArray(listing?.data) ? (listing.data as Record<string, unknown>[]) : [];
  const contextLength = positive(entries.find((entry) => entry.id === query.model)?.loaded_context_length);
  return contextLength === null ? null : { contextLength, contextSource: 'LM Studio /api/v0/models loaded_context_length', parallelSlots: null };
}

/** vLLM (and Archon's built-in engine): max_model_len on the model's entry in /v1/models. */
function fromVllm(query: ContextLengthQuery): ContextLength | null {
  const contextLength = positive(query.listed?.max_model_len);
  return contextLength === null ? null : { contextLength, contextSource: 'vLLM /v1/models max_model_len', parallelSlots: null };
}

/** llama.cpp names itself in its model entries: only its own /props is asked then, so it sees no request it would refuse. */
async function askedOfEachKind(query: ContextLengthQuery): Promise<ContextLength | null> {
  if (query.listed?.owned_by === 'llamacpp') return fromLlamaCpp(query);
  const [llamaCpp, ollama, lmStudio] = await Promise.all([fromLlamaCpp(query), fromOllama(query), fromLmStudio(query)]);
  return llamaCpp ?? ollama ?? lmStudio;
}

export async function discoverContextLength(query: ContextLengthQuery): Promise<ContextLength> {
  // A model entry that states its context (vLLM, Archon's built-in engine) is not asked again.
  const found = fromVllm(query) ?? (await askedOfEachKind(query));
  if (found) return found;
  if (query.configured !== null) return { contextLength: query.configured, contextSource: 'the contextLength setting', parallelSlots: null };
  return { contextLength: null, contextSource: null, parallelSlots: null };
}
