import { ArchonError } from '../../shared/errors';
import type { ArchonRuntime } from '../runtime';
import { dream, type DreamerDependencies } from './dreamer';

/** Dreams after one run ends, and again at most this many times for runs that ended meanwhile. */
const MAX_ROUNDS = 4;

/**
 * The app's automatic Dreamer (Settings.autoDream): after a run ends it dreams in the background,
 * one dream at a time, never holding up a run; closing the app cancels a dream under way (the runs
 * it was reading stay undreamt for the next one).
 */
export class BackgroundDreamer {
  private running: Promise<void> | null = null;
  private pending = false;
  private readonly controller = new AbortController();

  constructor(private readonly deps: { runtime: Pick<ArchonRuntime, 'store' | 'log' | 'now'>; connect: DreamerDependencies['connect'] }) {}

  /** A run ended: dream, unless Settings turn automatic dreaming (or memory) off. */
  runEnded(): void {
    const settings = this.deps.runtime.store.getSettings();
    if (!settings.autoDream || !settings.memory || this.controller.signal.aborted) return;
    if (this.running) {
      this.pending = true;
      return;
    }
    this.running = this.rounds().finally(() => {
      this.running = null;
    });
  }

  private async rounds(): Promise<void> {
    const { store, log, now } = this.deps.runtime;
    for (let round = 0; round < MAX_ROUNDS && !this.controller.signal.aborted; round++) {
      this.pending = false;
      try {
        const outcome = await dream({ runs: store.runs, dreams: store.dreams, memory: store.memory, connect: this.deps.connect, signal: this.controller.signal, now });
        if (outcome.unreadable) log.warn(`the Dreamer's answer could not be read: ${outcome.unreadable}`);
      } catch (error) {
        if (!this.controller.signal.aborted) log.warn({ err: error }, 'the Dreamer could not dream; `archon dream` tries again');
      }
      if (!this.pending) return;
    }
  }

  /** Resolves when no dream is under way. */
  async settled(): Promise<void> {
    await this.running;
  }

  async close(): Promise<void> {
    this.controller.abort(new ArchonError('CANCELLED', 'Archon is shutting down.'));
    await this.settled();
  }
}
