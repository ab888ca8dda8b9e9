import { randomUUID } from 'node:crypto';
import { raceAbort } from '../../shared/abort';
import { ArchonError } from '../../shared/errors';
import { withDriving } from './run-control';
import type { RunDetail, StartRunInput } from '../../shared/schemas/run-detail';
import { ENDED_RUN_STATUSES, type RunOptions } from '../../shared/schemas/run';
import { MAX_SUBAGENT_DEPTH } from '../../shared/schemas/roles';
import type { Settings } from '../../shared/schemas/settings';
import type { PendingApprovals } from '../approval/pending-approvals';
import { priceFor, settlePrice } from '../budget/pricing';
import type { ArchonRuntime } from '../runtime';
import type { EmergencyStop } from '../stop/emergency-stop';
import type { ToolHost } from '../tools/tool-host';
import type { RunEngineDependencies, RunResult } from './run-engine';
import { launchRun, type RunTarget } from './run-launcher';

export interface RunManagerOptions {
  runtime: Pick<ArchonRuntime, 'store' | 'events' | 'log' | 'now'>;
  estop: EmergencyStop;
  approvals: PendingApprovals;
  /** Defaults for runs started from the UI (`archon serve`'s flags, else the settings). */
  defaults(): RunOptions;
  connect: RunEngineDependencies['connect'];
  capabilities: RunEngineDependencies['capabilities'];
  toolHost(settings: Settings): ToolHost;
  /** Told when a run it drove has ended and let go of its tools (the app's Dreamer starts then). */
  onRunEnded?(runId: string): void;
  /** Told when the last active run has ended: nothing runs now. */
  onIdle?(): void;
}

type Connect = RunEngineDependencies['connect'];
type Connected = Awaited<ReturnType<Connect>>;

interface ActiveRun {
  controller: AbortController;
  done: Promise<RunResult>;
}

/**
 * Runs started from the app (over IPC or the host's socket): each in the background with its own
 * tool host, answered through the app's approval queue, stopped by the shared emergency stop.
 */
export class RunManager {
  private readonly active = new Map<string, ActiveRun>();

  constructor(private readonly options: RunManagerOptions) {}

  private get runs() {
    return this.options.runtime.store.runs;
  }

  /** Runs `target` in the background; settles once a new run's row exists, or with why it never will (a resumed run's never does). */
  private launch(runId: string, target: RunTarget, connect = this.options.connect): Promise<void> {
    const settings = this.options.runtime.store.settingsForRun();
    const controller = new AbortController();
    let exists = 'resume' in target;
    let created = () => {};
    let notCreated: (error: unknown) => void = () => {};
    const stored = new Promise<void>((resolve, reject) => {
      created = resolve;
      notCreated = reject;
    });
    stored.catch(() => undefined);
    const onCreated = () => {
      exists = true;
      created();
    };
    const launch = { runtime: this.options.runtime, settings, approvals: this.options.approvals, estop: this.options.estop, tools: this.options.toolHost(settings), connect, capabilities: this.options.capabilities, onCreated };
    const done = launchRun(launch, target, controller.signal)
      .catch((error: unknown): RunResult => {
        notCreated(error);
        if (exists) this.options.runtime.log.error({ err: error, runId }, 'a run from the app ended with an error');
        return { runId, status: 'failed', answer: null, error: error instanceof Error ? error.message : String(error) };
      })
      .finally(() => {
        this.active.delete(runId);
        if (exists) this.options.onRunEnded?.(runId);
        if (this.active.size === 0) this.options.onIdle?.();
      });
    this.active.set(runId, { controller, done });
    return stored;
  }

  /**
   * Probes the endpoint first, so a bad address is an error the operator sees at once; answers once the
   * run exists (what cannot start it, a cluster out of reach, is said instead); then runs in the background.
   */
  async start(input: StartRunInput, signal: AbortSignal): Promise<{ runId: string }> {
    this.options.estop.assertArmed();
    if (input.followUpOf && !this.runs.getRun(input.followUpOf)) throw new ArchonError('NOT_FOUND', `There is no run ${input.followUpOf} to follow up on.`);
    const defaults = this.options.defaults();
    const options: RunOptions = {
      ...defaults,
      ...Object.fromEntries(Object.entries(input).filter(([key, value]) => key !== 'goal' && value !== undefined)),
    };
    const settings = this.options.runtime.store.settingsForRun();
    const connected = await this.options.connect(options, this.options.estop.taskSignal(AbortSignal.timeout(60_000)), { probes: this.runs.probes });
    settlePrice(priceFor(options.modelUrl, connected.probe.model, { prices: settings.modelPrices }), { ...options, model: connected.probe.model });
    const runId = randomUUID();
    const created = this.launch(runId, { goal: input.goal, options, runId }, this.connectedFirst(options, connected));
    try {
      await raceAbort(created, signal);
    } catch (error) {
      // The asker gone, or the stop pressed, before the run exists: it does not start behind their back.
      if (signal.aborted) this.active.get(runId)?.controller.abort(signal.reason);
      throw error;
    }
    return { runId };
  }

  /** The run's own server as the start just probed it; a role's server of its own is probed as usual. */
  private connectedFirst(options: RunOptions, connected: Connected): Connect {
    return (wanted, signal, session) => (wanted.modelUrl === options.modelUrl && wanted.model === options.model ? Promise.resolve(connected) : this.options.connect(wanted, signal, session));
  }

  async resume(runId: string): Promise<{ runId: string }> {
    this.options.estop.assertArmed();
    await this.windDown(this.driverOf(runId) ?? runId);
    const driver = this.driverOf(runId);
    if (driver === runId) throw new ArchonError('VALIDATION_FAILED', `Run ${runId} is already running.`);
    if (driver) throw new ArchonError('VALIDATION_FAILED', `Run ${runId} is a sub-agent of run ${driver}, which is running and drives it; stop that run first to resume it on its own.`);
    void this.launch(runId, { resume: runId, overrides: {} });
    return { runId };
  }

  detail(runId: string): RunDetail {
    const stored = this.runs.getRun(runId);
    if (!stored) throw new ArchonError('NOT_FOUND', `There is no run ${runId}.`);
    return { run: withDriving(this.runs, stored.summary), steps: this.runs.getSteps(runId), events: this.runs.events(runId), active: this.isActive(runId) };
  }

  async delete(runId: string): Promise<void> {
    await this.windDown(this.driverOf(runId) ?? runId);
    const driver = this.driverOf(runId);
    if (driver === runId) throw new ArchonError('VALIDATION_FAILED', `Run ${runId} is still running; stop it before deleting it.`);
    if (driver) throw new ArchonError('VALIDATION_FAILED', `Run ${runId} is a sub-agent of run ${driver}, which is running; stop that run first to delete it.`);
    if (!this.runs.deleteRun(runId, this.options.runtime.now().toISOString())) throw new ArchonError('NOT_FOUND', `There is no run ${runId}.`);
  }

  /** The runs this manager holds in memory: only those still running (or closing their tools); a finished run lives in the store alone. */
  activeRunIds(): string[] {
    return [...this.active.keys()];
  }

  /** A run whose end is stored is over for the operator, even while its tools are still being closed. */
  isActive(runId: string): boolean {
    return this.driverOf(runId) !== null && !this.ended(runId);
  }

  private ended(runId: string): boolean {
    const status = this.runs.getRun(runId)?.summary.status;
    return status !== undefined && ENDED_RUN_STATUSES.has(status);
  }

  /** The run driven here that drives this one: itself, or for a sub-agent the ancestor whose process runs it (and has not ended). */
  private driverOf(runId: string): string | null {
    let id: string | undefined = runId;
    for (let hops = 0; id !== undefined && hops <= MAX_SUBAGENT_DEPTH; hops++) {
      if (this.active.has(id) && (id === runId || !this.ended(id))) return id;
      id = this.runs.getRun(id)?.options.parentRunId;
    }
    return null;
  }

  /** Waits for a run that has ended to release its tools and its lease, so it can be resumed or deleted at once. */
  private async windDown(runId: string): Promise<void> {
    const stored = this.runs.getRun(runId);
    if (!stored) throw new ArchonError('NOT_FOUND', `There is no run ${runId}.`);
    const winding = this.active.get(runId);
    if (winding && ENDED_RUN_STATUSES.has(stored.summary.status)) await winding.done;
  }

  async close(): Promise<void> {
    for (const run of this.active.values()) run.controller.abort(new ArchonError('CANCELLED', 'Archon is shutting down.'));
    await Promise.allSettled([...this.active.values()].map((run) => run.done));
  }
}
