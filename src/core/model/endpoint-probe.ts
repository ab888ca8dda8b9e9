import OpenAI from 'openai';
import { ArchonError } from '../../shared/errors';
import type { EndpointProbe } from '../../shared/schemas/endpoint';


export interface ProbeOptions {
  baseUrl: string;
  apiKey?: string;
  model?: string;
  signal: AbortSignal;
}

const PROBE_TOOL = {
  type: 'function' as const,
  function: { name: 'noop', description: 'Does nothing.', parameters: { type: 'object', properties: {} } },
};

function unreachable(baseUrl: string, reason: string, cause: unknown): ArchonError {
  return new ArchonError(
    'MODEL_UNREACHABLE',
    `Cannot reach the model server at ${baseUrl} (${reason}). Start it (for Ollama: \`ollama serve\`), ` +
      'or pass --model-url with its address (LM Studio: http://127.0.0.1:1234/v1, llama.cpp: http://127.0.0.1:8080/v1).',
    { cause },
  );
}

async function listModels(client: OpenAI, baseUrl: string, signal: AbortSignal): Promise<string[]> {
  try {
    const page = await client.models.list({ signal, timeout: 5000 });
    return page.data.map((model) => model.id);
  } catch (error) {
    if (signal.aborted) throw error;
    if (error instanceof OpenAI.APIConnectionError) throw unreachable(baseUrl, error.message, error);
    if (error instanceof OpenAI.AuthenticationError || error instanceof OpenAI.PermissionDeniedError) {
      throw new ArchonError('CONFIG_INVALID', `The model server at ${baseUrl} refused the API key (HTTP ${error.status}). Pass --api-key or set OPENAI_API_KEY.`, { cause: error });
    }
    if (error instanceof OpenAI.NotFoundError) return [];
    throw unreachable(baseUrl, error instanceof Error ? error.message : String(error), error);
  }
}

function chooseModel(requested: string | undefined, models: string[], baseUrl: string): string {
  if (requested) {
    const known = models.length === 0 || models.some((name) => name === requested || name.startsWith(`${requested}:`));
    if (!known) {
      throw new ArchonError('CONFIG_INVALID', `The model "${requested}" is not served by ${baseUrl}. Available: ${models.slice(0, 20).join(', ')}. Pass --model with one of them.`);
    }
    return requested;
  }
  const first = models[0];
  if (!first) throw new ArchonError('CONFIG_INVALID', `The model server at ${baseUrl} lists no models. Load one (for Ollama: \`ollama pull llama3.1\`) or pass --model.`);
  return first;
}

/** llama.cpp's server reports its context length and parallel slots at /props, beside /v1. */
async function llamaCppProps(baseUrl: string, signal: AbortSignal): Promise<{ contextLength: number | null; parallelSlots: number | null }> {
  const root = baseUrl.replace(/\/v1\/?$/, '');
  try {
    const response = await fetch(`${root}/props`, { signal: AbortSignal.any([signal, AbortSignal.timeout(2000)]) });
    if (!response.ok) return { contextLength: null, parallelSlots: null };
    const props = (await response.json()) as { default_generation_settings?: { n_ctx?: unknown }; total_slots?: unknown };
    const number = (value: unknown) => (typeof value === 'number' && value > 0 ? value : null);
    return { contextLength: number(props.default_generation_settings?.n_ctx), parallelSlots: number(props.total_slots) };
  } catch {
    return { contextLength: null, parallelSlots: null };
  }
}

async function supportsToolCalls(client: OpenAI, model: string, signal: AbortSignal): Promise<boolean> {
  try {
    await client.chat.completions.create(
      { model, messages: [{ role: 'user', content: 'ping' }], tools: [PROBE_TOOL], max_tokens: 1 },
      { signal, timeout: 60_000, headers: { 'X-Archon-Purpose': 'probe' } },
    );
    return true;
  } catch (error) {
    if (error instanceof OpenAI.APIError && [400, 422, 501].includes(error.status ?? 0)) return false;
    throw error;
  }
}

/** Before a run: is the server there, which model, can it call tools, how big and how parallel is it. */
export async function probeEndpoint(options: ProbeOptions): Promise<EndpointProbe> {
  const client = new OpenAI({ baseURL: options.baseUrl, apiKey: options.apiKey || 'not-needed', maxRetries: 0 });
  const models = await listModels(client, options.baseUrl, options.signal);
  const model = chooseModel(options.model, models, options.baseUrl);
  const [toolCalling, props] = await Promise.all([
    supportsToolCalls(client, model, options.signal).catch((error: unknown) => {
      if (options.signal.aborted) throw error;
      throw new ArchonError('MODEL_CALL_FAILED', `The model server at ${options.baseUrl} failed a test request: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }),
    llamaCppProps(options.baseUrl, options.signal),
  ]);
  return { baseUrl: options.baseUrl, models, model, toolCalling, ...props };
}
