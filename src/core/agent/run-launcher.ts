import type { ModelPrice, RunOptions } from '../../shared/schemas/run';
import type { Settings } from '../../shared/schemas/settings';
import type { ApprovalChannel } from '../approval/approval-channel';
import type { ArchonRuntime } from '../runtime';
import type { EmergencyStop } from '../stop/emergency-stop';
import type { ToolHost } from '../tools/tool-host';
import { runRulesFrom } from '../run/run-options';
import { recordRefusedRun, resumeRun, startRun, type RunEngineDependencies, type RunResult } from './run-engine';

export interface RunLaunch {
  runtime: Pick<ArchonRuntime, 'store' | 'events' | 'log' | 'now'>;
  settings: Settings;
  approvals: ApprovalChannel;
  estop: EmergencyStop;
  tools: ToolHost;
  connect: RunEngineDependencies['connect'];
  /** The capabilities of a run (composition.ts takes them from capabilities.ts). */
  capabilities: RunEngineDependencies['capabilities'];
  /** Caps beyond the settings' (a budget preset's day cap). */
  dayMaxTokens?: number | null;
  /** The price of this run's model, when the operator gave one for the run (it wins over Settings). */
  price?: ModelPrice | null;
  /** The Restate worker driving the run, when one does. */
  worker?: string;
  /** Holds what the run wrote beyond this machine before each of its calls leaves (the worker's cluster). */
  replicate?(signal: AbortSignal): Promise<void>;
  /** Told once a new run's row exists. */
  onCreated?(runId: string): void;
}

export type RunTarget = { goal: string; options: RunOptions; runId?: string } | { resume: string; overrides: Partial<RunOptions> };

/** The engine's wiring from a host's parts: one place for the CLI and the app's run manager alike. */
function engineDependencies(launch: RunLaunch): RunEngineDependencies {
  const { settings, runtime } = launch;
  return {
    ...runRulesFrom(settings, launch.dayMaxTokens),
    runs: runtime.store.runs,
    events: runtime.events,
    log: runtime.log,
    tools: (options, signal) => launch.tools.registry(options, signal),
    warmTools: (count, signal) => launch.tools.warm(count, signal),
    approvals: launch.approvals,
    estop: launch.estop,
    price: launch.price,
    connect: launch.connect,
    capabilities: launch.capabilities,
    memory: settings.memory ? runtime.store.memory : undefined,
    now: runtime.now,
    worker: launch.worker,
    replicate: launch.replicate,
    onCreated: launch.onCreated,
  };
}

/**
 * Runs a goal, or resumes a run, to its end: the emergency stop kills the run's tool processes, and
 * its tool host is closed however it ends.
 */
export async function launchRun(launch: RunLaunch, target: RunTarget, signal: AbortSignal): Promise<RunResult> {
  const unhook = launch.estop.onStop(() => launch.tools.stopAll());
  try {
    const dependencies = engineDependencies(launch);
    return 'goal' in target ? await startRun(dependencies, target.goal, target.options, signal, target.runId) : await resumeRun(dependencies, target.resume, target.overrides, signal);
  } finally {
    unhook();
    await launch.tools.close();
  }
}

/** A new run refused before it starts where nobody at a terminal hears why (a worker's): recorded as failed, with the reason. */
export function refuseRun(launch: RunLaunch, run: { id: string; goal: string; options: RunOptions }, error: unknown): void {
  recordRefusedRun(engineDependencies(launch), run, [], error);
}
