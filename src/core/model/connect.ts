import type { RunOptions } from '../../shared/schemas/run';
import type { ModelClient } from './chat';
import type { EndpointProbe } from '../../shared/schemas/endpoint';
import { contextWindowOf } from './context-window';
import { probeEndpoint } from './endpoint-probe';
import { createOpenAIModelClient } from './model-client';
import { Embedder } from '../memory/embedder';
import type { RetryPolicy } from './retry-policy';

export interface ModelCredentials {
  /** The API key to send to this base URL, if any (the app's keys are each bound to one origin). */
  apiKeyFor?: (baseUrl: string) => string | undefined;
  retry?: RetryPolicy;
  /** The operator's context length setting, for servers that report none. */
  contextLength?: () => number | null;
}

/** Probe the run's endpoint, then make the client for the model the probe settled on (and the embedder, when the run names an embedding model). */
export function modelConnector(credentials: ModelCredentials) {
  return async (options: RunOptions, signal: AbortSignal): Promise<{ probe: EndpointProbe; model: ModelClient; embedder: Embedder | null }> => {
    const apiKey = credentials.apiKeyFor?.(options.modelUrl);
    const probe = await probeEndpoint({ baseUrl: options.modelUrl, apiKey, model: options.model || undefined, contextLength: credentials.contextLength?.() ?? null, signal });
    return {
      probe,
      model: createOpenAIModelClient({ baseUrl: options.modelUrl, model: probe.model, apiKey, retry: credentials.retry, streaming: probe.streaming, context: contextWindowOf(probe) }),
      embedder: options.embeddingModel ? new Embedder({ baseUrl: options.modelUrl, model: options.embeddingModel, apiKey }) : null,
    };
  };
}
