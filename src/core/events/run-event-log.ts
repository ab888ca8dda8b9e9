import { RunEventSchema, type RunEvent, type RunEventType } from '../../shared/schemas/events';
import type { ArchonStore } from '../store/archon-store';
import type { EventBus } from './event-bus';

export type RunEventBody<T extends RunEventType> = Omit<Extract<RunEvent, { type: T }>, 'type' | 'runId' | 'seq' | 'ts'>;

/**
 * Numbers each run's events (seq strictly increasing per run), stores them in batches, and
 * announces a batch only once it is committed: what was announced survives a crash. Known secrets
 * are blanked out first, so neither archon.db nor anyone on the bus (the auditor) ever holds one.
 */
export class RunEventLog {
  private readonly seqs = new Map<string, number>();
  private pending: RunEvent[] = [];
  private flushScheduled = false;
  private failure: unknown = null;

  constructor(
    private readonly store: ArchonStore,
    private readonly bus: EventBus,
    private readonly now: () => Date = () => new Date(),
  ) {}

  append<T extends RunEventType>(runId: string, type: T, body: RunEventBody<T>): RunEvent {
    if (this.failure !== null) this.flush();
    const seq = (this.seqs.get(runId) ?? this.store.lastSeq(runId)) + 1;
    const event = RunEventSchema.parse({ ...this.store.secrets.redactValue(body), type, runId, seq, ts: this.now().toISOString() });
    this.seqs.set(runId, seq);
    this.pending.push(event);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => {
        try {
          this.flush();
        } catch (error) {
          // Kept, not lost: the next append or flush tries again, and throws to code that can pause the run.
          this.failure = error;
        }
      });
    }
    return event;
  }

  /** A run this process drives no more: its numbering is dropped (read again from the store if it comes back), unless events of it still wait to be stored. */
  forget(runId: string): void {
    if (!this.pending.some((event) => event.runId === runId)) this.seqs.delete(runId);
  }

  /** Whether an event of `type` of the run waits to be stored. */
  holds(runId: string, type: RunEventType): boolean {
    return this.pending.some((event) => event.runId === runId && event.type === type);
  }

  /** How many runs this log numbers events for now. */
  get runsTracked(): number {
    return this.seqs.size;
  }

  /** Stores what is pending, then announces it; a failed write keeps the batch for the next try and throws. */
  flush(): void {
    this.flushScheduled = false;
    if (this.pending.length === 0) {
      this.failure = null;
      return;
    }
    const batch = this.pending;
    try {
      this.store.appendEvents(batch);
    } catch (error) {
      this.failure = error;
      throw error;
    }
    this.failure = null;
    this.pending = [];
    for (const event of batch) this.bus.publish(event);
  }
}
