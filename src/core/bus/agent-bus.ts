import { randomUUID } from 'node:crypto';
import { raceAbort } from '../../shared/abort';
import { ArchonError } from '../../shared/errors';
import type { BusEnvelope, BusMessageKind } from '../../shared/schemas/bus';
import type { RunEventLog } from '../events/run-event-log';
import type { BusMessageStore, StoredBusMessage } from '../store/bus-messages';

/** What an agent hands over: the bus gives it an id, a time, a topic and a place in the store. */
export interface BusPost {
  from: string;
  to: string;
  kind: BusMessageKind;
  body: string;
  /** The task this message answers (its result, critique or decision); a new task correlates with itself. */
  correlationId?: string;
  /** Defaults to the recipient's own topic, `agent:<to>`. */
  topic?: string;
}

/** How many messages a subscriber may fall behind before it reads the rest from the store. */
export const BUS_QUEUE_LIMIT = 256;
const MAX_BODY = 20_000;

function openTaskKey(runId: string, agentId: string): string {
  return `${runId}\n${agentId}`;
}

export function agentTopic(agentId: string): string {
  return `agent:${agentId}`;
}

function clip(body: string): string {
  return body.length <= MAX_BODY ? body : `${body.slice(0, MAX_BODY - 20)}… [clipped]`;
}

/**
 * One in-process agent's inbox on a topic. The queue is bounded: a subscriber that falls behind
 * stops queueing and reads what it missed from the store, in order, so nothing is lost or held
 * twice in memory.
 */
export class BusSubscription {
  readonly runId: string;
  readonly topic: string;
  private readonly queue: StoredBusMessage[] = [];
  private readonly limit: number;
  /** The last message queued (or read from the store): where catching up resumes. */
  private lastSeq: number;
  private behind: boolean;
  private closed = false;
  private wake: (() => void) | null = null;

  constructor(
    private readonly store: BusMessageStore,
    start: { runId: string; topic: string; afterSeq: number; behind: boolean; limit: number },
    private readonly onClose: (subscription: BusSubscription) => void,
  ) {
    this.runId = start.runId;
    this.topic = start.topic;
    this.lastSeq = start.afterSeq;
    this.behind = start.behind;
    this.limit = start.limit;
  }

  /** Whether a message on `envelope.topic` reaches this subscriber (see BusMessageStore.heardAfter). */
  hears(runId: string, envelope: BusEnvelope): boolean {
    return runId === this.runId && (envelope.topic === this.topic || `type:${envelope.kind}` === this.topic || envelope.topic === 'broadcast');
  }

  offer(stored: StoredBusMessage): void {
    if (this.closed) return;
    if (this.behind || this.queue.length >= this.limit) this.behind = true;
    else {
      this.queue.push(stored);
      this.lastSeq = stored.seq;
    }
    this.wake?.();
  }

  /** The next message in publishing order; waits for one (cancellable). */
  async next(signal: AbortSignal): Promise<BusEnvelope> {
    while (!this.closed) {
      signal.throwIfAborted();
      if (this.queue.length === 0 && this.behind) this.catchUp();
      const head = this.queue.shift();
      if (head) return head.envelope;
      await raceAbort(new Promise<void>((resolve) => (this.wake = resolve)), signal).finally(() => (this.wake = null));
    }
    throw new ArchonError('CANCELLED', `The subscription to ${this.topic} was closed; subscribe again to hear more.`);
  }

  close(): void {
    this.closed = true;
    this.onClose(this);
    this.wake?.();
  }

  private catchUp(): void {
    const missed = this.store.heardAfter(this.runId, this.topic, this.lastSeq, this.limit);
    this.queue.push(...missed);
    this.lastSeq = missed.at(-1)?.seq ?? this.lastSeq;
    this.behind = missed.length === this.limit;
  }
}

/**
 * The agent bus: every message between agents (a task, its result, a critique, an escalation, a
 * decision) is stored first, numbered on its topic, then announced as `bus.message` on the run's
 * event log and delivered to in-process subscribers. Agents never call each other directly.
 */
export class AgentBus {
  private readonly subscriptions = new Set<BusSubscription>();
  /** Tasks published here and not answered yet, by run and agent: the critique of an agent's work finds its task without reading the store. */
  private readonly openTasks = new Map<string, BusEnvelope>();

  constructor(
    private readonly store: BusMessageStore,
    private readonly events: Pick<RunEventLog, 'append'>,
    private readonly clock: { now: () => Date; newId: () => string } = { now: () => new Date(), newId: randomUUID },
  ) {}

  publish(runId: string, post: BusPost): BusEnvelope {
    const id = this.clock.newId();
    // Checked once, as stored (BusMessageStore.append parses what it writes).
    const envelope: BusEnvelope = {
      id,
      correlationId: post.correlationId ?? id,
      from: post.from,
      to: post.to,
      topic: post.topic ?? agentTopic(post.to),
      kind: post.kind,
      body: clip(post.body),
      ts: this.clock.now().toISOString(),
    };
    const stored = this.store.append(runId, envelope);
    this.noteOpenTask(runId, stored.envelope);
    const { ts: _ts, ...announced } = stored.envelope;
    this.events.append(runId, 'bus.message', announced);
    for (const subscription of this.subscriptions) if (subscription.hears(runId, stored.envelope)) subscription.offer(stored);
    return stored.envelope;
  }

  /**
   * Hands `post` over: a new message, unless the same request from the same sender is still open (a
   * resumed run doing again what it had asked before it stopped), which is reused, never sent twice.
   */
  request(runId: string, post: BusPost & { kind: 'task' | 'escalation' }): BusEnvelope {
    const open = this.store.lastTo(runId, post.to, post.kind)?.envelope;
    const same = open && open.from === post.from && open.body === this.store.redact(clip(post.body));
    return same && !this.store.answered(runId, open.id) ? open : this.publish(runId, post);
  }

  /** Hears `topic` (`agent:<id>`, `type:<kind>`; broadcasts always) from the next message on, or after `afterSeq` when given. */
  subscribe(runId: string, topic: string, options: { afterSeq?: number; limit?: number } = {}): BusSubscription {
    const last = this.store.lastSeq(runId);
    const afterSeq = Math.min(options.afterSeq ?? last, last);
    const subscription = new BusSubscription(this.store, { runId, topic, afterSeq, behind: afterSeq < last, limit: options.limit ?? BUS_QUEUE_LIMIT }, (closed) => this.subscriptions.delete(closed));
    this.subscriptions.add(subscription);
    return subscription;
  }

  /** The task last handed to `agentId`: what a critique of its work correlates with. */
  lastTask(runId: string, agentId: string): BusEnvelope | null {
    return this.openTasks.get(openTaskKey(runId, agentId)) ?? this.store.lastTo(runId, agentId, 'task')?.envelope ?? null;
  }

  private noteOpenTask(runId: string, envelope: BusEnvelope): void {
    if (envelope.kind === 'task') this.openTasks.set(openTaskKey(runId, envelope.to), envelope);
    else if (envelope.kind === 'result' && this.openTasks.get(openTaskKey(runId, envelope.from))?.id === envelope.correlationId) this.openTasks.delete(openTaskKey(runId, envelope.from));
  }

  /** A run's messages in publishing order, with their numbers. */
  messages(runId: string): StoredBusMessage[] {
    return this.store.list(runId);
  }
}
