import type { RunOptions } from '../../shared/schemas/run';
import type { ModelClient } from './chat';
import type { EndpointProbe } from '../../shared/schemas/endpoint';
import { probeEndpoint } from './endpoint-probe';
import { createOpenAIModelClient } from './model-client';
import type { RetryPolicy } from './retry-policy';

/** Probe the run's endpoint, then make the client for the model the probe settled on. */
export function modelConnector(credentials: { apiKey?: string; retry?: RetryPolicy; contextLength?: () => number | null }) {
  return async (options: RunOptions, signal: AbortSignal): Promise<{ probe: EndpointProbe; model: ModelClient }> => {
    const probe = await probeEndpoint({ baseUrl: options.modelUrl, apiKey: credentials.apiKey, model: options.model || undefined, contextLength: credentials.contextLength?.() ?? null, signal });
    const context = probe.contextLength === null ? null : { contextLength: probe.contextLength, source: probe.contextSource };
    return { probe, model: createOpenAIModelClient({ baseUrl: options.modelUrl, model: probe.model, apiKey: credentials.apiKey, retry: credentials.retry, streaming: probe.streaming, context }) };
  };
}
