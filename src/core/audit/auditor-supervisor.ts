import { FromAuditorSchema, type ToAuditor } from '../../shared/auditor-protocol';
import { ENDED_RUN_STATUSES } from '../../shared/schemas/run';
import { heartbeatLeasesNow, LEASE_STALE_MS } from '../run/run-lease';
import type { ArchonRuntime } from '../runtime';
import type { ProcessChannel } from '../process/process-channel';
import { AuditorClient } from './auditor-client';

/** How an auditor process ended: its exit code, or the signal that killed it where the platform says. */
export interface AuditorExit {
  code: number | null;
  signal: string | null;
}

/** One started auditor process (a forked child in the CLI, a utility process in the app). */
export interface AuditorProcess {
  readonly pid: number | undefined;
  send(message: ToAuditor): void;
  onMessage(listener: (raw: unknown) => void): () => void;
  onExit(listener: (code: number | null, signal?: string | null) => void): () => void;
}

/** The auditor as its client sees it: one channel that outlives the processes behind it. */
export interface SupervisedAuditor extends ProcessChannel<unknown, ToAuditor> {
  /** The process now behind the channel. */
  readonly pid: number | undefined;
}

export interface SupervisorOptions {
  /** Told after each restart. */
  onRestart?(exit: AuditorExit, restarts: number): void;
  /** Told once when the auditor cannot be kept (not while draining: the host is leaving and its next start catches up). */
  onGiveUp?(reason: string): void;
  maxRestarts?: number;
  windowMs?: number;
  now?: () => number;
}

/**
 * Three restarts a minute survive a kill or an out-of-memory death; a fourth death is a crash loop (a
 * broken disk, a bad build) that restarting will not fix, so the host stops running unaudited instead.
 */
export const MAX_RESTARTS = 3;
export const RESTART_WINDOW_MS = 60_000;

export function describeExit(exit: AuditorExit): string {
  return exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.code ?? 'unknown'}`;
}

/**
 * Restarts the auditor when it dies, at once (it resumes from the last event it recorded per run, so
 * nothing is lost), and tells the new one why so it records `auditor.restarted`. Reports, verifications
 * and a drain the dead one left unanswered go to the new one once it is ready. A process that never
 * became ready the first time is not restarted: its refusal or failure is the host's answer.
 */
export function superviseAuditor(launch: () => AuditorProcess, options: SupervisorOptions = {}): SupervisedAuditor {
  const { maxRestarts = MAX_RESTARTS, windowMs = RESTART_WINDOW_MS, now = Date.now } = options;
  const messageListeners = new Set<(raw: unknown) => void>();
  const exitListeners = new Set<(code: number | null) => void>();
  const unanswered = new Map<number, ToAuditor>();
  let deaths: number[] = [];
  let phase: 'starting' | 'ready' | 'restarting' | 'over' = 'starting';
  let draining = false;
  let gaveUp = false;
  let lastExit: AuditorExit = { code: null, signal: null };
  let current: AuditorProcess;
  let detach: (() => void)[] = [];

  const giveUp = (reason: string) => {
    if (gaveUp) return;
    gaveUp = true;
    if (!draining) options.onGiveUp?.(reason);
  };
  const becameReady = () => {
    phase = 'ready';
    current.send({ type: 'restarted', ...lastExit, restarts: deaths.length });
    for (const message of unanswered.values()) current.send(message);
    if (draining) current.send({ type: 'drain' });
  };
  const onMessage = (raw: unknown) => {
    const parsed = FromAuditorSchema.safeParse(raw);
    if (parsed.success) {
      const message = parsed.data;
      if ('id' in message && message.id !== null) unanswered.delete(message.id);
      if (message.type === 'ready' || message.type === 'refused') {
        // A refusing auditor still answers reports and verification; it records nothing, so runs cannot go on.
        if (phase === 'restarting') becameReady();
        else if (message.type === 'ready') phase = 'ready';
        if (message.type === 'refused' && deaths.length > 0) giveUp(`the restarted auditor cannot vouch for the log: ${message.problem}`);
      }
    }
    for (const listener of messageListeners) listener(raw);
  };
  const end = (code: number | null) => {
    phase = 'over';
    for (const listener of exitListeners) listener(code);
  };
  const onExit = (code: number | null, signal?: string | null) => {
    for (const stop of detach.splice(0)) stop();
    lastExit = { code, signal: signal ?? null };
    if (phase === 'starting' || gaveUp || (draining && code === 0)) return end(code);
    const at = now();
    deaths = [...deaths.filter((time) => at - time < windowMs), at];
    if (deaths.length > maxRestarts) {
      giveUp(`the auditor died ${deaths.length} times within ${Math.round(windowMs / 1000)} seconds (last: ${describeExit(lastExit)})`);
      return end(code);
    }
    phase = 'restarting';
    options.onRestart?.(lastExit, deaths.length);
    try {
      start();
    } catch (error) {
      giveUp(`the auditor could not be started again (${(error as Error).message})`);
      end(code);
    }
  };
  const start = () => {
    current = launch();
    detach = [current.onMessage(onMessage), current.onExit(onExit)];
  };
  start();

  return {
    get pid() {
      return current.pid;
    },
    send(message) {
      if (phase === 'over') return;
      if (message.type === 'drain') draining = true;
      if ('id' in message) unanswered.set(message.id, message);
      // Held until the new process is ready, then sent once (becameReady); a nudge is superseded by its catch-up.
      if (phase === 'restarting' && message.type !== 'nudge') return;
      current.send(message);
    },
    onMessage(listener) {
      messageListeners.add(listener);
      return () => messageListeners.delete(listener);
    },
    onExit(listener) {
      exitListeners.add(listener);
      return () => exitListeners.delete(listener);
    },
  };
}

/** Pauses every run this process drives, at once (through its lease, as `archon pause` does): no run goes on unaudited. */
export function pauseRunsDrivenHere(runtime: ArchonRuntime, by: string): string[] {
  const runs = runtime.store.runs;
  const at = Date.now();
  const driven = runs
    .listRuns(500)
    .filter((run) => !ENDED_RUN_STATUSES.has(run.status) && runs.leaseHolder(run.id, at, LEASE_STALE_MS, (pid) => pid === process.pid) === process.pid)
    .map((run) => run.id);
  for (const runId of driven) runs.requestControl(runId, { action: 'pause', by: by.slice(0, 200) });
  heartbeatLeasesNow();
  return driven;
}

/**
 * The auditor every host runs: supervised, its restarts said, and when it cannot be kept, the runs
 * this process drives paused (resumable) with the reason, and no new run started.
 */
export function supervisedAuditorClient(launch: () => AuditorProcess, runtime: ArchonRuntime, say: (message: string) => void, options: Omit<SupervisorOptions, 'onRestart' | 'onGiveUp'> = {}): { client: AuditorClient; auditor: SupervisedAuditor } {
  const auditor = superviseAuditor(launch, {
    ...options,
    onRestart: (exit, restarts) => say(`The auditor process stopped (${describeExit(exit)}); it was restarted and catches up on what it missed (restart ${restarts} of at most ${options.maxRestarts ?? MAX_RESTARTS} a minute).`),
    onGiveUp: (reason) => {
      const paused = pauseRunsDrivenHere(runtime, `Archon, because ${reason}`);
      say(`The audit cannot be kept: ${reason}. ${paused.length > 0 ? `Paused ${paused.join(', ')}; ` : ''}no run starts until Archon is restarted. Check \`archon audit verify\` and the disk, then \`archon resume RUN_ID\`.`);
    },
  });
  return { client: new AuditorClient(auditor, runtime.bus, say), auditor };
}
