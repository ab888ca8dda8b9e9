import type { EngineStats } from '../shared/engine-protocol';

/** `ARCHON_ENGINE_LOG=verbose`: the engine also writes a line when each generation starts and ends, with its speed. */
export const ENGINE_LOG_ENV = 'ARCHON_ENGINE_LOG';

type Tokens = { promptTokens: number; completionTokens: number; maxTokens: number };

/** How the engine's generations ended, counted by the engine itself (`GET /archon/stats`), and its lines on the host's stderr. */
export class GenerationStats {
  private stats: EngineStats = { completed: 0, aborted: 0, failed: 0, last: null };

  constructor(private readonly verbose = process.env[ENGINE_LOG_ENV] === 'verbose') {}

  /** A generation is under way; returns what records its end. */
  started(maxTokens: number): (outcome: 'completed' | 'aborted' | 'failed', tokens: Tokens) => void {
    const began = performance.now();
    if (this.verbose) process.stderr.write(`archon engine: generating (at most ${maxTokens} tokens)\n`);
    return (outcome, tokens) => this.record(outcome, tokens, performance.now() - began);
  }

  private record(outcome: 'completed' | 'aborted' | 'failed', tokens: Tokens, elapsedMs: number): void {
    this.stats = { ...this.stats, [outcome]: this.stats[outcome] + 1, last: { outcome, ...tokens } };
    // The host's log shows an aborted generation: the emergency stop or a cancellation reached the engine.
    if (outcome === 'aborted') process.stderr.write(`archon engine: generation aborted by its client after ${tokens.completionTokens} of at most ${tokens.maxTokens} tokens\n`);
    else if (this.verbose) process.stderr.write(`archon engine: generation ${outcome}: ${tokens.completionTokens} tokens in ${Math.round(elapsedMs)} ms\n`);
  }

  snapshot(): EngineStats {
    return this.stats;
  }
}
