import { randomUUID } from 'node:crypto';
import { ArchonError } from '../../shared/errors';
import type { RunDetail, StartRunInput } from '../../shared/schemas/run-detail';
import type { RunOptions } from '../../shared/schemas/run';
import type { Settings } from '../../shared/schemas/settings';
import type { PendingApprovals } from '../approval/pending-approvals';
import type { RunEventLog } from '../events/run-event-log';
import type { EmergencyStop } from '../stop/emergency-stop';
import type { RunStore } from '../store/run-store';
import type { ToolHost } from '../tools/tool-host';
import { resumeRun, startRun, type RunEngineDependencies, type RunResult } from './run-engine';

export interface RunManagerOptions {
  runs: RunStore;
  events: RunEventLog;
  estop: EmergencyStop;
  approvals: PendingApprovals;
  settings(): Settings;
  /** Defaults for runs started from the UI (`archon serve`'s flags, else the settings). */
  defaults(): RunOptions;
  connect: RunEngineDependencies['connect'];
  toolHost(settings: Settings): ToolHost;
}

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

  private dependencies(tools: ToolHost, connect: RunEngineDependencies['connect']): RunEngineDependencies {
    const settings = this.options.settings();
    return {
      runs: this.options.runs,
      events: this.options.events,
      tools: (runOptions) => tools.registry(runOptions),
      approvals: this.options.approvals,
      toolApproval: settings.toolApproval,
      expiryMs: Object.fromEntries(Object.entries(settings.approvalExpirySeconds).map(([kind, seconds]) => [kind, seconds * 1000])),
      caps: { dayMaxTokens: settings.dailyMaxTokens, dayMaxCostUsd: settings.dailyMaxCostUsd },
      estop: this.options.estop,
      connect,
    };
  }

  private launch(runId: string, run: (dependencies: RunEngineDependencies, signal: AbortSignal) => Promise<RunResult>, connect = this.options.connect): void {
    const controller = new AbortController();
    const tools = this.options.toolHost(this.options.settings());
    const unhook = this.options.estop.onStop(() => tools.stopAll());
    const done = run(this.dependencies(tools, connect), controller.signal)
      .catch((error: unknown): RunResult => ({ runId, status: 'failed', answer: null, error: error instanceof Error ? error.message : String(error) }))
      .finally(async () => {
        unhook();
        this.active.delete(runId);
        await tools.close();
      });
    this.active.set(runId, { controller, done });
  }

  /** Probes the endpoint first, so a bad address is an error the operator sees at once; then runs in the background. */
  async start(input: StartRunInput): Promise<{ runId: string }> {
    this.options.estop.assertArmed();
    const defaults = this.options.defaults();
    const options: RunOptions = {
      ...defaults,
      ...Object.fromEntries(Object.entries(input).filter(([key, value]) => key !== 'goal' && value !== undefined)),
    };
    const connected = await this.options.connect(options, AbortSignal.timeout(60_000));
    const runId = randomUUID();
    this.launch(runId, (dependencies, signal) => startRun(dependencies, input.goal, options, signal, runId), async () => connected);
    return { runId };
  }

  resume(runId: string): { runId: string } {
    this.options.estop.assertArmed();
    if (this.active.has(runId)) throw new ArchonError('VALIDATION_FAILED', `Run ${runId} is already running.`);
    const stored = this.options.runs.getRun(runId);
    if (!stored) throw new ArchonError('NOT_FOUND', `There is no run ${runId}.`);
    this.launch(runId, (dependencies, signal) => resumeRun(dependencies, runId, {}, signal));
    return { runId };
  }

  detail(runId: string): RunDetail {
    const stored = this.options.runs.getRun(runId);
    if (!stored) throw new ArchonError('NOT_FOUND', `There is no run ${runId}.`);
    return { run: stored.summary, steps: this.options.runs.getSteps(runId), events: this.options.runs.events(runId), active: this.active.has(runId) };
  }

  delete(runId: string): void {
    if (this.active.has(runId)) throw new ArchonError('VALIDATION_FAILED', `Run ${runId} is still running; stop it before deleting it.`);
    if (!this.options.runs.deleteRun(runId)) throw new ArchonError('NOT_FOUND', `There is no run ${runId}.`);
  }

  isActive(runId: string): boolean {
    return this.active.has(runId);
  }

  async close(): Promise<void> {
    for (const run of this.active.values()) run.controller.abort(new ArchonError('CANCELLED', 'Archon is shutting down.'));
    await Promise.allSettled([...this.active.values()].map((run) => run.done));
  }
}
