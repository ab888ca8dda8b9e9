import type { GbnfJsonSchema, Llama, LlamaGrammar } from 'node-llama-cpp';
import { RequestError } from './request-error';

/** Grammars kept for the schemas clients send again and again (a run's tools, its answer schemas); the oldest goes past this. */
const KEPT = 32;

/** Grammars built from JSON Schemas by node-llama-cpp, each built once while it is in use. */
export class Grammars {
  private readonly kept = new Map<string, Promise<LlamaGrammar>>();

  constructor(private readonly llama: Llama) {}

  forSchema(schema: GbnfJsonSchema): Promise<LlamaGrammar> {
    return this.cached(JSON.stringify(schema), () => this.llama.createGrammarForJsonSchema<GbnfJsonSchema>(schema));
  }

  /** Any JSON value (`response_format: {type: "json_object"}`). */
  anyJson(): Promise<LlamaGrammar> {
    return this.cached('json', () => this.llama.getGrammarFor('json'));
  }

  private cached(key: string, build: () => Promise<LlamaGrammar>): Promise<LlamaGrammar> {
    const found = this.kept.get(key);
    if (found) {
      this.kept.delete(key);
      this.kept.set(key, found);
      return found;
    }
    const built = build().catch((error: unknown) => {
      this.kept.delete(key);
      throw new RequestError(400, 'invalid_request_error', `failed to parse grammar: ${error instanceof Error ? error.message : String(error)}`);
    });
    this.kept.set(key, built);
    for (const oldest of this.kept.keys()) {
      if (this.kept.size <= KEPT) break;
      this.kept.delete(oldest);
    }
    return built;
  }
}
