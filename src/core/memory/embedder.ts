import OpenAI from 'openai';

/** An embeddings request that takes longer than this is given up on: recall goes on lexically. */
export const EMBEDDING_TIMEOUT_MS = 30_000;

export interface EmbedderOptions {
  baseUrl: string;
  model: string;
  apiKey?: string;
}

/**
 * Embeddings from the model server's `/v1/embeddings`, through the openai client. A server that
 * fails is not asked again by this embedder (`failure` says why): recall falls back to FTS5, and
 * nothing fails because embeddings did.
 */
export class Embedder {
  private readonly client: OpenAI;
  /** Why embeddings are unavailable, once a request failed. */
  failure: string | null = null;

  constructor(private readonly options: EmbedderOptions) {
    this.client = new OpenAI({ baseURL: options.baseUrl, apiKey: options.apiKey || 'not-needed', maxRetries: 0 });
  }

  get model(): string {
    return this.options.model;
  }

  /** One vector per text, in order; null when embeddings are unavailable (or the signal ended the wait). */
  async embed(texts: readonly string[], signal: AbortSignal): Promise<number[][] | null> {
    if (this.failure !== null || texts.length === 0 || signal.aborted) return null;
    try {
      const response = await this.client.embeddings.create(
        { model: this.options.model, input: [...texts], encoding_format: 'float' },
        { signal: AbortSignal.any([signal, AbortSignal.timeout(EMBEDDING_TIMEOUT_MS)]) },
      );
      const vectors = [...response.data].sort((a, b) => a.index - b.index).map((entry) => entry.embedding);
      if (vectors.length !== texts.length || vectors.some((vector) => vector.length === 0)) throw new Error(`the server returned ${vectors.length} embeddings for ${texts.length} texts`);
      return vectors;
    } catch (error) {
      if (signal.aborted) return null;
      this.failure = error instanceof Error ? error.message : String(error);
      return null;
    }
  }
}
