import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Confinement, ExecutorMessage } from '../../shared/executor-protocol';
import type { ToolResult } from '../../shared/schemas/tool';
import { raceAbort } from '../../shared/abort';
import type { Log } from '../log';
import type { ProcessLauncher, ToolProcess } from '../process/process-launcher';
import { groupRunning, pollUntil, processRunning, signal } from '../process/process-liveness';
import { toolResult } from './tool-registry';
import type { CallOptions, ToolCaller } from './tool-caller';

export interface ToolWorkerPoolOptions {
  launcher: ProcessLauncher;
  /** The executor script (out/node/executor.js). */
  entry: string;
  workspace: string;
  networkTools: boolean;
  /** How run_command is confined (sent with every call); by default, sandboxed without network. */
  confinement?: Confinement;
  /** Idle workers kept started, so a call does not pay a process start. */
  warm?: number;
  /** Workers at most, busy or idle, per kind (Settings.toolWorkers); by default `toolWorkerCap(null)`. */
  maxWorkers?: number;
  memoryMb?: number;
  /** Node's permission model: the folders a worker may read besides the workspace and the temp dir. Null where the host cannot apply it. */
  readableRoots: string[] | null;
  killGraceMs?: number;
  /** Where a worker that died unasked is noted. */
  log?: Log;
}

/** Command workers may start processes; the others may not. */
type WorkerKind = 'plain' | 'command';

export type ToolWorkerStats = Record<WorkerKind | 'ready', number>;

interface Worker {
  kind: WorkerKind;
  process: ToolProcess;
  ready: Promise<boolean>;
  exited: Promise<number | null>;
  groups: Set<number>;
  /** Sandbox inits (host pids): when one has exited, so has every process of its sandbox. */
  sandboxes: Set<number>;
  alive: boolean;
  isReady: boolean;
  /** Read-only calls it serves now (see SHARED_CALLS_PER_WORKER); a worker with readers is never idle nor lent to a call with side effects. */
  readers: number;
  stopping?: Promise<void>;
}

interface PendingCall {
  worker: Worker;
  settle(result: ToolResult, kill: boolean): void;
  onSpawn?(pgid: number): void;
}

const COMMAND_TOOLS = new Set(['run_command']);
/** The sandbox's init as /proc names it (bubblewrap's own init in its PID namespace). */
const SANDBOX_INIT = 'bwrap';
const DEFAULT_CONFINEMENT: Confinement = { mode: 'on', allowNetwork: false, hidden: [] };
/** Tool workers per core when Settings leave their number to the plan: a worker mostly waits (on files, the network, its commands), so more than one per core pays. */
const WORKERS_PER_CORE = 16;
/** Settings.toolWorkers' own ceiling, and the floor that keeps a small machine's pool as wide as it always was. */
const MAX_TOOL_WORKERS = 64;
const MIN_TOOL_WORKERS = 8;
/**
 * Read-only calls one plain worker serves at once. They cannot harm one another (no side effects) and
 * the executor takes calls concurrently, so a fan-out of reads needs a process per 8 calls, not per call:
 * each process start costs the runtime a fork and the machine a Node start.
 */
export const SHARED_CALLS_PER_WORKER = 8;

/** The most tool workers of a kind a run may have: the operator's number, else 16 per core within 8..64. */
export function toolWorkerCap(setting: number | null | undefined, cores = availableParallelism()): number {
  return setting ?? Math.min(MAX_TOOL_WORKERS, Math.max(MIN_TOOL_WORKERS, WORKERS_PER_CORE * cores));
}

/**
 * Tools run here, outside the runtime's process: a warm pool of executor processes, each call under
 * a timeout that kills its process groups (SIGTERM, then SIGKILL after a grace period), a memory cap
 * per worker, and a replacement for any worker that crashes.
 */
export class ToolWorkerPool implements ToolCaller {
  private readonly idle = new Map<WorkerKind, Worker[]>([
    ['plain', []],
    ['command', []],
  ]);
  private readonly all = new Set<Worker>();
  private readonly calls = new Map<number, PendingCall>();
  private readonly waiters: { kind: WorkerKind; resolve: (worker: Worker) => void }[] = [];
  private nextId = 1;
  private closed = false;
  /** The emergency stop fired: nothing more is started ahead of a call. */
  private halted = false;
  /** Plain workers kept started, busy or idle, for the widest level of the plan being run. */
  private warmed = 0;
  /** Takes the pool's listener off the run's signal it warmed for. */
  private forgetRun: (() => void) | null = null;

  constructor(private readonly options: ToolWorkerPoolOptions) {}

  /** Starts the warm workers now rather than at the first call. */
  warmUp(): void {
    this.replenish('plain');
  }

  /**
   * Starts plain workers until `count` of them (capped by the pool's maximum) are running, busy or
   * idle, so a fan-out's first calls do not wait for a cold start. Never shrinks the pool. A stop of
   * `signal` (the run's) ends the warming: the idle workers go, as the estop's `stopAll` makes them go.
   */
  warmTo(count: number, signal: AbortSignal): void {
    if (this.closed || this.halted || signal.aborted) return;
    const wanted = Math.min(count, this.maxWorkers);
    if (wanted <= this.warmed) return;
    if (this.warmed === 0) {
      const onAbort = () => void this.coolDown();
      signal.addEventListener('abort', onAbort, { once: true });
      // The run's signal outlives the pool when it is derived from the estop's: its listener must not keep the pool.
      this.forgetRun = () => signal.removeEventListener('abort', onAbort);
    }
    this.warmed = wanted;
    this.replenish('plain');
  }

  /** Workers running now, busy or idle, by kind, and how many of them are ready for a call. */
  stats(): ToolWorkerStats {
    const workers = [...this.all];
    return { plain: workers.filter((worker) => worker.kind === 'plain').length, command: workers.filter((worker) => worker.kind === 'command').length, ready: workers.filter((worker) => worker.isReady).length };
  }

  /** No more warming, and every worker is stopped: the warm ones, the starting ones, the busy ones with what their calls started. */
  private coolDown(): Promise<void> {
    this.halted = true;
    this.warmed = 0;
    for (const idle of this.idle.values()) idle.splice(0);
    return Promise.all([...this.all].map((worker) => this.terminate(worker))).then(() => undefined);
  }

  private get warm(): number {
    return this.options.warm ?? 2;
  }

  /** A temp folder of the pool's own: the only place besides the workspace a worker may write. */
  private tempDir: string | null = null;

  private workerTempDir(): string {
    this.tempDir ??= mkdtempSync(join(tmpdir(), 'archon-tools-'));
    return this.tempDir;
  }

  private execArgv(kind: WorkerKind): string[] {
    const flags = [`--max-old-space-size=${this.options.memoryMb ?? 256}`];
    if (this.options.readableRoots) {
      // On Linux the file tools reach what they opened through /proc/self/fd (see src/executor/workspace-files.ts).
      const writable = [this.options.workspace, this.workerTempDir(), ...(process.platform === 'linux' ? ['/proc/self/fd'] : [])];
      flags.push('--permission', ...[...this.options.readableRoots, ...writable].map((path) => `--allow-fs-read=${path}`), ...writable.map((path) => `--allow-fs-write=${path}`));
      // The command tool's workers start processes by design; Node's warning about it is known here.
      if (kind === 'command') flags.push('--allow-child-process', '--disable-warning=SecurityWarning');
    }
    return flags;
  }

  private start(kind: WorkerKind): Worker {
    const child = this.options.launcher.launch(this.options.entry, {
      execArgv: this.execArgv(kind),
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', TMPDIR: this.workerTempDir() },
      cwd: this.options.workspace,
    });
    let markReady: (ok: boolean) => void = () => undefined;
    const worker: Worker = {
      kind,
      process: child,
      groups: new Set(),
      sandboxes: new Set(),
      alive: true,
      isReady: false,
      readers: 0,
      ready: new Promise((resolve) => (markReady = resolve)),
      exited: new Promise((resolve) => child.onExit(resolve)),
    };
    child.onMessage((message) => this.onMessage(worker, message, markReady));
    void worker.exited.then((code) => this.onExit(worker, code, markReady));
    this.all.add(worker);
    return worker;
  }

  private onMessage(worker: Worker, message: ExecutorMessage, markReady: (ok: boolean) => void): void {
    if (message.type === 'ready') {
      worker.isReady = true;
      markReady(true);
    }
    else if (message.type === 'spawned') {
      worker.groups.add(message.pgid);
      if (message.sandboxPid !== undefined) worker.sandboxes.add(message.sandboxPid);
      this.calls.get(message.id)?.onSpawn?.(message.pgid);
    }
    else if (message.type === 'result') {
      const call = this.calls.get(message.id);
      if (call?.worker === worker) call.settle(message.result, false);
    }
  }

  private onExit(worker: Worker, code: number | null, markReady: (ok: boolean) => void): void {
    worker.alive = false;
    markReady(false);
    if (!worker.stopping && !this.closed) this.options.log?.warn({ kind: worker.kind, code, pid: worker.process.pid }, 'a tool worker died; it is replaced');
    this.all.delete(worker);
    const idle = this.idle.get(worker.kind) as Worker[];
    if (idle.includes(worker)) idle.splice(idle.indexOf(worker), 1);
    for (const call of this.calls.values()) {
      if (call.worker === worker) {
        const how = code === null ? 'killed by a signal' : `exit code ${code}`;
        call.settle(toolResult('error', `The tool process stopped before the call finished (${how}); it crashed or ran out of memory. It was replaced.`, { workerDied: true }), true);
      }
    }
    this.replenish(worker.kind);
    this.serveWaiters(worker.kind);
  }

  /** Callers waiting for a worker of a kind get one when one is free or may be started. */
  private serveWaiters(kind: WorkerKind): void {
    const idle = this.idle.get(kind) as Worker[];
    for (let index = this.waiters.findIndex((waiter) => waiter.kind === kind); index >= 0; index = this.waiters.findIndex((waiter) => waiter.kind === kind)) {
      const worker = idle.shift() ?? (this.countOf(kind) < this.maxWorkers && !this.closed ? this.start(kind) : undefined);
      if (!worker) return;
      this.waiters.splice(index, 1)[0]?.resolve(worker);
    }
  }

  private replenish(kind: WorkerKind): void {
    if (this.closed || this.halted) return;
    const target = kind === 'plain' ? this.warm : Math.min(1, this.warm);
    const idle = this.idle.get(kind) as Worker[];
    while (idle.length < target && this.countOf(kind) < this.maxWorkers) idle.push(this.start(kind));
    if (kind === 'plain') for (let count = this.countOf(kind); count < this.warmed; count++) idle.push(this.start(kind));
  }

  private countOf(kind: WorkerKind): number {
    return [...this.all].filter((worker) => worker.kind === kind).length;
  }

  private get maxWorkers(): number {
    return this.options.maxWorkers ?? toolWorkerCap(null);
  }

  /** Queues for the next free worker of a kind; a stop takes the caller out of the queue. */
  private waitForWorker(kind: WorkerKind, signal: AbortSignal): Promise<Worker> {
    let waiter: { kind: WorkerKind; resolve: (worker: Worker) => void } | undefined;
    const queued = new Promise<Worker>((resolve) => {
      waiter = { kind, resolve };
      this.waiters.push(waiter);
    });
    return raceAbort(queued, signal).catch((error: unknown) => {
      const index = this.waiters.indexOf(waiter as (typeof this.waiters)[number]);
      if (index >= 0) this.waiters.splice(index, 1);
      // Served just as the stop came: the worker goes back to the pool.
      else void queued.then((worker) => this.release(worker));
      throw error;
    });
  }

  /**
   * A worker for a call: an idle one, else a new one within the maximum, else the next to come free.
   * A read-only (`shared`) call first joins a worker already serving reads with room for another; it
   * counts as a reader at once, so the calls of a fan-out gather on the workers there are rather than each starting its own.
   */
  private async acquire(kind: WorkerKind, signal: AbortSignal, shared: boolean): Promise<Worker | null> {
    for (let attempt = 0; attempt < 3 && !signal.aborted; attempt++) {
      const idle = this.idle.get(kind) as Worker[];
      const worker =
        (shared ? this.sharingWorker() : undefined) ??
        idle.shift() ??
        (this.countOf(kind) < this.maxWorkers
          ? this.start(kind)
          : await this.waitForWorker(kind, signal));
      if (shared) worker.readers++;
      if (await worker.ready) return worker;
      if (shared) worker.readers--;
    }
    return null;
  }

  private sharingWorker(): Worker | undefined {
    return [...this.all].find((worker) => worker.kind === 'plain' && worker.readers > 0 && worker.readers < SHARED_CALLS_PER_WORKER && worker.alive && !worker.stopping);
  }

  /** A call is done with its worker: a shared one goes back to the pool with its last reader. */
  private leave(worker: Worker, shared: boolean): void {
    if (shared && --worker.readers > 0) return;
    // Whatever a finished command left running in its group is a stray: it goes. (A sandbox is gone by now: bwrap exits after its init.)
    for (const group of worker.groups) signal(-group, 'SIGKILL');
    worker.groups.clear();
    worker.sandboxes.clear();
    this.release(worker);
  }

  private release(worker: Worker): void {
    if (!worker.alive || worker.stopping || this.closed) return;
    (this.idle.get(worker.kind) as Worker[]).push(worker);
    this.serveWaiters(worker.kind);
  }

  /**
   * Kills what a worker's calls started, then the worker: SIGTERM, SIGKILL after the grace period.
   * Resolves only once every one of those processes has exited (bounded: 5 s of SIGKILLs at most),
   * with the worker still alive to reap the sandboxes it started.
   */
  private terminate(worker: Worker): Promise<void> {
    worker.stopping ??= (async () => {
      const grace = this.options.killGraceMs ?? 200;
      this.signalCallProcesses(worker, 'SIGTERM');
      if (!(await pollUntil(() => !this.callProcessesRunning(worker), grace))) {
        await pollUntil(() => {
          this.signalCallProcesses(worker, 'SIGKILL');
          return !this.callProcessesRunning(worker);
        }, 5000);
      }
      worker.process.kill('SIGTERM');
      const first = await Promise.race([worker.exited.then(() => 'exited' as const), new Promise<'grace'>((resolve) => setTimeout(() => resolve('grace'), grace).unref())]);
      if (first === 'grace') worker.process.kill('SIGKILL');
      await Promise.race([worker.exited, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
    })();
    return worker.stopping;
  }

  private signalCallProcesses(worker: Worker, name: NodeJS.Signals): void {
    for (const pid of worker.sandboxes) if (processRunning(pid, SANDBOX_INIT)) signal(pid, name);
    for (const group of worker.groups) signal(-group, name);
  }

  private callProcessesRunning(worker: Worker): boolean {
    return [...worker.sandboxes].some((pid) => processRunning(pid, SANDBOX_INIT)) || [...worker.groups].some(groupRunning);
  }

  private exchange(worker: Worker, id: number, tool: string, args: unknown, options: CallOptions): Promise<{ result: ToolResult; kill: boolean }> {
    return new Promise((resolve) => {
      const finish = (result: ToolResult, kill: boolean) => {
        clearTimeout(timer);
        options.signal.removeEventListener('abort', onAbort);
        resolve({ result, kill });
      };
      const timer = setTimeout(() => finish(toolResult('timeout', `${tool} did not finish within ${options.timeoutMs / 1000} s; it and every process it started were killed.`), true), options.timeoutMs);
      const onAbort = () => finish(toolResult('cancelled', `${tool} was stopped; it and every process it started were killed.`), true);
      options.signal.addEventListener('abort', onAbort, { once: true });
      this.calls.set(id, { worker, settle: finish, onSpawn: options.onSpawn });
      if (!worker.alive) return finish(toolResult('error', `The tool process for ${tool} had stopped before the call reached it; it was replaced: try again.`), false);
      worker.process.send({ type: 'call', id, tool, args, workspace: this.options.workspace, networkTools: this.options.networkTools, confinement: this.options.confinement ?? DEFAULT_CONFINEMENT, timeoutMs: options.timeoutMs });
    });
  }

  /**
   * Runs one tool call in a worker; it never throws. A read-only call shares its worker and, when the
   * worker died under it (another call's timeout or crash may have taken it down), runs once more.
   */
  async call(tool: string, args: unknown, options: CallOptions): Promise<ToolResult> {
    const kind: WorkerKind = COMMAND_TOOLS.has(tool) ? 'command' : 'plain';
    const shared = options.readOnly === true && kind === 'plain';
    const first = await this.callOnce(tool, args, options, kind, shared);
    return shared && first.metadata.workerDied === true && !options.signal.aborted ? this.callOnce(tool, args, options, kind, shared) : first;
  }

  private async callOnce(tool: string, args: unknown, options: CallOptions, kind: WorkerKind, shared: boolean): Promise<ToolResult> {
    if (this.closed) return toolResult('cancelled', 'The tool host is shut down.');
    const worker = await this.acquire(kind, options.signal, shared).catch(() => null);
    if (options.signal.aborted) {
      if (worker) this.leave(worker, shared);
      return toolResult('cancelled', `${tool} was cancelled before it started.`);
    }
    if (!worker) return toolResult('error', 'No tool process could be started. Check that Archon is built completely (npm run build).');
    const id = this.nextId++;
    const outcome = await this.exchange(worker, id, tool, args, options);
    this.calls.delete(id);
    if (outcome.kill) await this.terminate(worker);
    else this.leave(worker, shared);
    return outcome.result;
  }

  /** The emergency stop's hook: every busy worker and the processes it started are killed at once, and the warm ones with them. */
  async stopAll(): Promise<void> {
    const busy = [...this.calls.values()];
    for (const call of busy) call.settle(toolResult('cancelled', 'Stopped by the emergency stop; the call and every process it started were killed.'), true);
    await this.coolDown();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.forgetRun?.();
    this.forgetRun = null;
    await this.stopAll();
    await Promise.all([...this.all].map((worker) => this.terminate(worker)));
    if (this.tempDir) rmSync(this.tempDir, { recursive: true, force: true });
  }
}
