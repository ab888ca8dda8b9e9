import { FromAuditorSchema, type FromAuditor, type ToAuditor } from '../../shared/auditor-protocol';
import type { ProcessChannel } from '../process/process-channel';
import { ArchonError } from '../../shared/errors';
import type { AuditReport, VerifyResult } from '../../shared/schemas/audit';
import type { AuditPort } from '../command-handlers';
import type { EventBus } from '../events/event-bus';

/** The auditor's process as its host holds it: child_process.fork in the CLI, a utility process in the app. */
/** The auditor's process as the host talks to it; its messages are parsed here. */
export type AuditorChannel = ProcessChannel<unknown, ToAuditor>;

type AuditorState = { kind: 'starting' } | { kind: 'ready' } | { kind: 'refused'; problem: string } | { kind: 'gone'; why: string };

const DRAIN_TIMEOUT_MS = 60_000;

/**
 * Talks to the auditor process by messages only: the runtime has no path to the auditor's log or its key.
 * It nudges the auditor after each committed batch of events, asks it for reports, and drains it
 * before the host exits. No run may start until the auditor is ready (`assertReady`).
 */
export class AuditorClient implements AuditPort {
  private state: AuditorState = { kind: 'starting' };
  private readonly settled: Promise<AuditorState>;
  private readonly waiting = new Map<number, { resolve(message: FromAuditor): void; reject(error: Error): void }>();
  private readonly nudged = new Set<string>();
  private nudgeScheduled = false;
  private nextId = 0;
  private drained: (() => void) | null = null;
  private draining = false;
  private exit: string | null = null;
  private readonly cleanups: (() => void)[] = [];
  private readonly unsubscribe: () => void;

  constructor(
    private readonly channel: AuditorChannel,
    bus: EventBus,
    /** Where the host says what went wrong with the auditor after it started (the CLI: stderr). */
    onTrouble: (message: string) => void = () => undefined,
  ) {
    let settle: (state: AuditorState) => void = () => undefined;
    this.settled = new Promise((resolve) => (settle = resolve));
    const become = (state: AuditorState) => {
      this.state = state;
      settle(state);
    };
    this.cleanups.push(
      channel.onMessage((raw) => {
        const parsed = FromAuditorSchema.safeParse(raw);
        if (!parsed.success) return;
        const message = parsed.data;
        if (message.type === 'ready') become({ kind: 'ready' });
        else if (message.type === 'refused') become({ kind: 'refused', problem: message.problem });
        else if (message.type === 'drained') this.drained?.();
        else if (message.type === 'failed' && message.id === null) {
          // A log that cannot even be opened is one the operator must reset, like any other it cannot vouch for.
          if (this.state.kind === 'starting') become(message.error.code === 'STORE_CORRUPT' ? { kind: 'refused', problem: message.error.message } : { kind: 'gone', why: message.error.message });
          else onTrouble(`${message.error.message} (the auditor retries from where it stopped; \`archon audit verify\` tells whether anything is missing)`);
        } else if (message.id !== null) this.answer(message.id, message);
      }),
      channel.onExit((code) => {
        if (!this.draining && this.state.kind === 'ready') onTrouble(`The auditor process exited (code ${code ?? 'none'}); its next start catches up on what it missed.`);
        this.exit = `the auditor process exited (code ${code ?? 'none'})`;
        // A refusal stays the reason no run starts, even once the process is gone.
        if (this.state.kind !== 'refused') become({ kind: 'gone', why: this.exit });
        this.drained?.();
        for (const [, pending] of this.waiting) pending.reject(new ArchonError('INTERNAL', 'The auditor process exited. Restart Archon.'));
        this.waiting.clear();
      }),
    );
    this.unsubscribe = bus.subscribe((event) => {
      if (!this.nudgeScheduled) {
        this.nudgeScheduled = true;
        setImmediate(() => this.nudge());
      }
      if ('runId' in event) this.nudged.add(event.runId);
    });
  }

  /** Resolves when the auditor has caught up and is following (or has refused, or failed to start). */
  started(): Promise<AuditorState> {
    return this.settled;
  }

  /** Throws unless the auditor vouches for the log and follows it: no run starts otherwise. */
  assertReady(): void {
    const state = this.state;
    if (state.kind === 'ready') return;
    if (state.kind === 'refused') {
      throw new ArchonError('AUDIT_RESET_REQUIRED', `The audit log cannot be vouched for: ${state.problem}. No run starts on this data dir until the operator runs \`archon audit reset --acknowledge "<reason>"\` (the old log is kept).`);
    }
    throw new ArchonError('INTERNAL', state.kind === 'starting' ? 'The auditor is still catching up; try again in a moment.' : `The auditor is not running (${state.why}). Restart Archon.`);
  }

  private nudge(): void {
    const runIds = [...this.nudged];
    this.nudged.clear();
    this.nudgeScheduled = false;
    if (this.exit === null) this.channel.send({ type: 'nudge', runIds });
  }

  private answer(id: number, message: FromAuditor): void {
    const pending = this.waiting.get(id);
    if (!pending) return;
    this.waiting.delete(id);
    if (message.type === 'failed') pending.reject(new ArchonError(message.error.code, message.error.message));
    else pending.resolve(message);
  }

  private ask(message: (id: number) => ToAuditor): Promise<FromAuditor> {
    if (this.exit !== null) return Promise.reject(new ArchonError('INTERNAL', `The auditor is not running (${this.exit}). Restart Archon.`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.channel.send(message(id));
    });
  }

  async report(scope: { runId: string } | { day: string }): Promise<AuditReport> {
    const answer = await this.ask((id) => ({ type: 'report', id, scope }));
    if (answer.type !== 'report') throw new ArchonError('INTERNAL', 'The auditor answered a report with something else.');
    return answer.report;
  }

  async verify(): Promise<VerifyResult> {
    const answer = await this.ask((id) => ({ type: 'verify', id }));
    if (answer.type !== 'verify') throw new ArchonError('INTERNAL', 'The auditor answered a verification with something else.');
    return answer.result;
  }

  /**
   * Before the host exits: the auditor catches up to the last committed event, answers, and exits.
   * Bounded: a stuck auditor is left after a minute (its next start catches up).
   */
  async drain(signal: AbortSignal = AbortSignal.timeout(DRAIN_TIMEOUT_MS)): Promise<void> {
    this.unsubscribe();
    this.draining = true;
    if (this.exit === null && !signal.aborted) {
      await new Promise<void>((resolve) => {
        const done = () => {
          signal.removeEventListener('abort', done);
          resolve();
        };
        this.drained = done;
        signal.addEventListener('abort', done, { once: true });
        this.channel.send({ type: 'drain' });
      });
    }
    for (const cleanup of this.cleanups.splice(0)) cleanup();
  }
}
