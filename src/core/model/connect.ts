import { isBuiltinModelUrl } from '../../shared/model-presets';
import { ArchonError } from '../../shared/errors';
import type { RunOptions } from '../../shared/schemas/run';
import type { ModelClient } from './chat';
import type { EndpointProbe } from '../../shared/schemas/endpoint';
import { contextWindowOf } from './context-window';
import { probeEndpoint, probeWouldCatch } from './endpoint-probe';
import { createOpenAIModelClient } from './model-client';
import { Embedder } from './embedder';
import type { BuiltinEngines, RunningEngine } from './builtin-engine';
import type { ProbeCache, ProbeKey } from './probe-cache';
import type { RetryPolicy } from './retry-policy';
import type { RequestSink, ServerRequest } from './server-request';

export interface ModelCredentials {
  /** The API key to send to this base URL, if any (the app's keys are each bound to one origin). */
  apiKeyFor?: (baseUrl: string) => string | undefined;
  retry?: RetryPolicy;
  /** The operator's context length setting, for servers that report none. */
  contextLength?: () => number | null;
  /** The built-in engine, for runs whose model URL is `builtin`; a host without one refuses them. */
  engines?: Pick<BuiltinEngines, 'ensure'>;
}

/** What a run connects with: earlier runs' probes, when the host keeps them, and who hears each request the probe sends as it is sent. */
export interface ConnectSession {
  probes?: ProbeCache;
  onRequest?: RequestSink;
}

export interface Connected {
  probe: EndpointProbe;
  model: ModelClient;
  embedder: Embedder | null;
  /** Every request the probe sent (none when an earlier probe stood), for the run's `model_calls`. */
  requests: ServerRequest[];
}

/** A fresh probe from the cache, else a probe of the server (kept for the runs that follow). */
async function probeFor(key: ProbeKey, apiKey: string | undefined, signal: AbortSignal, session: ConnectSession): Promise<{ probe: EndpointProbe; requests: ServerRequest[] }> {
  const cached = session.probes?.get(key);
  if (cached) return { probe: cached, requests: [] };
  const requests: ServerRequest[] = [];
  const onRequest = (request: ServerRequest) => {
    requests.push(request);
    return session.onRequest?.(request);
  };
  const probe = await probeEndpoint({ baseUrl: key.baseUrl, apiKey, model: key.model || undefined, contextLength: key.contextSetting, signal, onRequest });
  session.probes?.put(key, probe);
  // A run keeps the model the probe settled on: its resume asks for that one by name.
  if (probe.model !== key.model) session.probes?.put({ ...key, model: probe.model }, probe);
  return { probe, requests };
}

/** The client, forgetting the cached probe when a call fails for a reason a fresh probe would have caught. */
function forgettingProbe(model: ModelClient, probes: ProbeCache | undefined): ModelClient {
  if (!probes) return model;
  return {
    baseUrl: model.baseUrl,
    model: model.model,
    chat: (request, options) =>
      model.chat(request, options).catch((error: unknown) => {
        if (probeWouldCatch(error)) probes.forget(model.baseUrl, model.model);
        throw error;
      }),
  };
}

interface Server {
  baseUrl: string;
  apiKey: string | undefined;
  model: string;
  engine: RunningEngine | null;
}

/** The server a run's options name: the one at its URL, or the built-in engine (started if need be) serving the model they name. */
async function serverFor(options: RunOptions, credentials: ModelCredentials, signal: AbortSignal): Promise<Server> {
  if (!isBuiltinModelUrl(options.modelUrl)) return { baseUrl: options.modelUrl, apiKey: credentials.apiKeyFor?.(options.modelUrl), model: options.model, engine: null };
  if (!credentials.engines) throw new ArchonError('CONFIG_INVALID', 'This host cannot start the built-in engine; use `archon run --model-url builtin` or the app, or pass --model-url with a model server.');
  const engine = await credentials.engines.ensure(options.model, signal);
  return { baseUrl: engine.baseUrl, apiKey: engine.apiKey, model: engine.model, engine };
}

/** The engine says how many generations it runs at once and how large its context is: the probe takes its word. */
function withEngineFacts(probe: EndpointProbe, engine: RunningEngine | null): EndpointProbe {
  return engine ? { ...probe, contextLength: engine.contextLength, contextSource: "Archon's built-in engine", parallelSlots: engine.slots } : probe;
}

/** Probe the run's endpoint (or take an earlier run's fresh probe), then make the client for the model it settled on (and the embedder, when the run names an embedding model). */
export function modelConnector(credentials: ModelCredentials) {
  return async (options: RunOptions, signal: AbortSignal, session: ConnectSession = {}): Promise<Connected> => {
    const { baseUrl, apiKey, model, engine } = await serverFor(options, credentials, signal);
    const key = { baseUrl, model, contextSetting: credentials.contextLength?.() ?? null };
    const probed = await probeFor(key, apiKey, signal, session);
    const probe = withEngineFacts(probed.probe, engine);
    const client = createOpenAIModelClient({ baseUrl, model: probe.model, apiKey, retry: credentials.retry, streaming: probe.streaming, context: contextWindowOf(probe) });
    return {
      probe,
      model: forgettingProbe(client, session.probes),
      embedder: options.embeddingModel ? new Embedder({ baseUrl, model: options.embeddingModel, apiKey }) : null,
      requests: probed.requests,
    };
  };
}
