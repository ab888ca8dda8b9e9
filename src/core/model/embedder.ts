import OpenAI from 'openai';
import { observedFetch, type RequestSink } from './server-request';

/** An embeddings request that takes longer than this is given up on: recall goes on lexically. */
export const EMBEDDING_TIMEOUT_MS = 30_000;

export interface EmbedderOptions {
  baseUrl: string;
  model: string;
  apiKey?: string;
}

/** What every view of one embedder shares: the server's answer to whether embeddings work. */
interface EmbedderState {
  failure: string | null;
}

/**
 * Embeddings from the model server's `/v1/embeddings`, through the openai client, each request sent
 * with X-Archon-Purpose: embedding and told to the run it is made for (`recordingTo`). A server that
 * fails is not asked again by this embedder or its views (`failure` says why): recall falls back to
 * FTS5, and nothing fails because embeddings did.
 */
export class Embedder {
  constructor(
    private readonly options: EmbedderOptions,
    private readonly state: EmbedderState = { failure: null },
    private readonly onRequest?: RequestSink,
  ) {}

  get model(): string {
    return this.options.model;
  }

  /** Why embeddings are unavailable, once a request failed. */
  get failure(): string | null {
    return this.state.failure;
  }

  /** The same embedder, its requests told to `onRequest` (one run's record of them); a failure seen by one view holds for all. */
  recordingTo(onRequest: RequestSink): Embedder {
    return new Embedder(this.options, this.state, onRequest);
  }

  /** One vector per text, in order; null when embeddings are unavailable (or the signal ended the wait). Resolves once the request is recorded. */
  async embed(texts: readonly string[], signal: AbortSignal): Promise<number[][] | null> {
    if (this.state.failure !== null || texts.length === 0 || signal.aborted) return null;
    const observed = observedFetch('embedding', this.onRequest);
    const client = new OpenAI({ baseURL: this.options.baseUrl, apiKey: this.options.apiKey || 'not-needed', maxRetries: 0, fetch: observed.fetch });
    try {
      const response = await client.embeddings.create(
        { model: this.options.model, input: [...texts], encoding_format: 'float' },
        { signal: AbortSignal.any([signal, AbortSignal.timeout(EMBEDDING_TIMEOUT_MS)]) },
      );
      const vectors = [...response.data].sort((a, b) => a.index - b.index).map((entry) => entry.embedding);
      if (vectors.length !== texts.length || vectors.some((vector) => vector.length === 0)) throw new Error(`the server returned ${vectors.length} embeddings for ${texts.length} texts`);
      return vectors;
    } catch (error) {
      if (signal.aborted) return null;
      this.state.failure = error instanceof Error ? error.message : String(error);
      return null;
    } finally {
      await observed.settled();
    }
  }
}
