import { anySignal } from '../../shared/abort';
import { ArchonError } from '../../shared/errors';
import type { EstopState, EstopTrigger } from '../../shared/schemas/estop';
import type { EventBus } from '../events/event-bus';
import type { ArchonStore } from '../store/archon-store';

export const WATCH_INTERVAL_MS = 100;

/** The abort reason every run sees when the emergency stop fires. */
export function estopError(state: EstopState): ArchonError {
  return new ArchonError(
    'ESTOP_LATCHED',
    `Emergency stop (${state.triggeredBy ?? 'unknown'}: ${state.reason ?? 'no reason given'}). Re-arm with \`archon estop --reset\` or the app's Re-arm; nothing restarts by itself.`,
    { details: { triggeredBy: state.triggeredBy, reason: state.reason, since: state.since } },
  );
}

/**
 * The latched emergency stop of one process, shared by every run in it. Triggering writes the stop
 * durably first, then aborts the root signal (every model stream) and calls the stop hooks (every
 * tool process group). A stop written by another process sharing the data dir is noticed by polling
 * within WATCH_INTERVAL_MS. Re-arming only unlatches: it never restarts anything.
 */
export class EmergencyStop {
  private controller = new AbortController();
  private readonly hooks = new Set<() => Promise<void> | void>();
  private watcher: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: ArchonStore,
    private readonly bus: EventBus,
    private readonly now: () => Date = () => new Date(),
  ) {}

  private announce(state: EstopState): EstopState {
    this.bus.publish({ type: 'system.estop', ts: this.now().toISOString(), state });
    return state;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  state(): EstopState {
    return this.store.estopState();
  }

  /** Refuses to start anything while latched. */
  assertArmed(): void {
    const state = this.state();
    if (state.latched) throw estopError(state);
  }

  /**
   * The signal of one process-level task (an undo, an MCP Test, a probe): refused while latched, then
   * aborted by the stop or by `extra` (the caller's own cancellation), whichever comes first.
   */
  taskSignal(extra?: AbortSignal): AbortSignal {
    const state = this.state();
    if (state.latched) throw estopError(state);
    // Re-armed by another process since the watcher last looked: this process is armed again too.
    if (this.controller.signal.aborted) this.controller = new AbortController();
    return anySignal(this.controller.signal, extra);
  }

  onStop(hook: () => Promise<void> | void): () => void {
    this.hooks.add(hook);
    return () => this.hooks.delete(hook);
  }

  async trigger(triggeredBy: EstopTrigger, reason: string): Promise<EstopState> {
    const state = this.announce(this.store.recordEstop('trigger', triggeredBy, reason, this.now().toISOString()));
    await this.fire(state);
    return state;
  }

  private async fire(state: EstopState): Promise<void> {
    if (this.controller.signal.aborted) return;
    this.controller.abort(estopError(state));
    await Promise.allSettled([...this.hooks].map((hook) => hook()));
  }

  /** Re-arms this process too: later runs get a fresh signal. */
  reset(reason = 'Re-armed by the operator'): EstopState {
    const state = this.announce(this.store.recordEstop('reset', null, reason, this.now().toISOString()));
    this.controller = new AbortController();
    return state;
  }

  /** Polls the data dir for a stop written by another process. */
  watch(intervalMs = WATCH_INTERVAL_MS): () => void {
    this.watcher ??= setInterval(() => {
      const state = this.state();
      if (state.latched && !this.controller.signal.aborted) void this.fire(this.announce(state));
      else if (!state.latched && this.controller.signal.aborted) this.controller = new AbortController();
    }, intervalMs);
    this.watcher.unref();
    return () => {
      if (this.watcher) clearInterval(this.watcher);
      this.watcher = null;
    };
  }
}
