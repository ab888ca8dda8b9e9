import { ArchonError } from '../../shared/errors';
import type { RunOptions } from '../../shared/schemas/run';
import { dreamRun, type DreamRunDependencies } from './dream-run';

/** Dreams after one run ends, and again at most this many times for runs that ended meanwhile. */
const MAX_ROUNDS = 4;

export interface BackgroundDreamerDependencies extends Pick<DreamRunDependencies, 'runtime' | 'estop' | 'approvals' | 'connect'> {
  /** The model server and policy a dream runs with: the app's run defaults. */
  options(): RunOptions;
}

/**
 * The app's automatic Dreamer (Settings.autoDream): after a run ends it dreams in the background,
 * one dream at a time, never holding up a run. Each dream is a run of kind `dream` (dream-run.ts):
 * none starts while the emergency stop is latched, and the stop ends one under way; closing the app
 * cancels it too (the runs it was reading stay undreamt for the next one).
 */
export class BackgroundDreamer {
  private running: Promise<void> | null = null;
  private pending = false;
  private readonly controller = new AbortController();

  constructor(private readonly deps: BackgroundDreamerDependencies) {}

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
    const { log } = this.deps.runtime;
    for (let round = 0; round < MAX_ROUNDS && !this.controller.signal.aborted; round++) {
      this.pending = false;
      try {
        const settings = this.deps.runtime.store.getSettings();
        const ended = await dreamRun({ ...this.deps, options: this.deps.options(), settings }, this.controller.signal);
        if (ended.error !== null) log.warn({ runId: ended.runId, status: ended.status }, `the dream ended ${ended.status}: ${ended.error}`);
      } catch (error) {
        if (ArchonError.isInstance(error) && error.code === 'ESTOP_LATCHED') return;
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
