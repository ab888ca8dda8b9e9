import { ArchonError } from '../../shared/errors';
import type { DreamOutcome } from '../../core/memory/dreamer';
import { dreamRun, type DreamRunResult } from '../../core/memory/dream-run';
import { composeRunServices } from '../../core/composition';
import type { ArchonRuntime } from '../../core/runtime';
import { commandLineApiKeys } from '../../core/secrets/api-key-source';
import type { RunStatus } from '../../shared/schemas/run';
import { nodeWorkers, runOptionsFromFlags } from './run-command';
import { approvalChannelFor } from './terminal-approvals';
import type { DreamFlags } from './command-flags';
import { engineLauncher } from './engine-launcher';

const EXIT_BY_STATUS: Partial<Record<RunStatus, number>> = { completed: 0, failed: 1, stopped: 3, budget_exhausted: 4, rejected: 5 };

function describe(outcome: DreamOutcome): string {
  if (outcome.runIds.length === 0) return 'Nothing new to dream: every finished run has been dreamt already.\n';
  const lines = [`Dreamt ${outcome.runIds.length} run(s): ${outcome.runIds.join(', ')}. Stored ${outcome.stored.length} lesson(s).`];
  for (const lesson of outcome.stored) lines.push(`lesson ${lesson.id}: ${lesson.text}`, `  evidence: ${lesson.evidence.join(', ')}${lesson.appliesTo ? `; applies to: ${lesson.appliesTo}` : ''}`);
  if (outcome.dropped.length > 0) lines.push(`Left out ${outcome.dropped.length} lesson(s) whose evidence named runs that were not read: ${outcome.dropped.map((lesson) => lesson.evidence.join(', ')).join('; ')}.`);
  return `${lines.join('\n')}\n`;
}

function report(ended: DreamRunResult): void {
  if (ended.status === 'completed') process.stdout.write(describe(ended.outcome));
  else process.stdout.write(`Dream ${ended.runId ?? ''} ended ${ended.status}: ${ended.error ?? 'no reason was recorded'}\n`);
}

/**
 * `archon dream`: the Dreamer over every finished run not dreamt yet, in this process, as a run of
 * kind `dream`; prints what it stored. Exit 0 when it ran (also with nothing to dream), 1 when it
 * failed (an unreadable answer), 3 stopped (refused while the emergency stop is latched, or stopped
 * meanwhile), 4 over the day's budget, 5 its model call rejected; an unreachable model server is an
 * error (exit 2) from the probe. Ctrl-C stops the dream alone.
 */
export async function dreamFromCli(runtime: ArchonRuntime, flags: DreamFlags): Promise<number> {
  const settings = runtime.store.getSettings();
  const options = runOptionsFromFlags(settings, flags);
  const keys = commandLineApiKeys(flags, runtime.store.secrets, options.modelUrl);
  const { estop, connect, close } = composeRunServices({ runtime, workers: nodeWorkers(runtime), apiKeyFor: (url) => keys.keyFor(url), settings: () => settings, engineLauncher: engineLauncher() });
  const controller = new AbortController();
  const stop = () => controller.abort(new ArchonError('CANCELLED', 'Stopped with Ctrl-C; the runs it was reading stay undreamt for the next dream.'));
  process.once('SIGINT', stop);
  try {
    const ended = await dreamRun(
      {
        runtime,
        estop,
        approvals: approvalChannelFor(flags.approve),
        connect,
        options,
        settings,
      },
      controller.signal,
    );
    report(ended);
    return EXIT_BY_STATUS[ended.status] ?? 1;
  } finally {
    process.off('SIGINT', stop);
    await close();
  }
}
