import { dream, type DreamOutcome } from '../../core/memory/dreamer';
import { modelConnector } from '../../core/model/connect';
import { retryPolicyFrom } from '../../core/model/retry-policy';
import type { ArchonRuntime } from '../../core/runtime';
import { apiKeyFromCommandLine } from '../../core/secrets/api-key-source';
import { runOptionsFrom } from './run-command';
import type { DreamFlags } from './command-flags';

function describe(outcome: DreamOutcome): string {
  if (outcome.unreadable !== null) return `The model's lessons could not be read: ${outcome.unreadable} Nothing was stored; \`archon dream\` tries these runs again.\n`;
  if (outcome.runIds.length === 0) return 'Nothing new to dream: every finished run has been dreamt already.\n';
  const lines = [`Dreamt ${outcome.runIds.length} run(s): ${outcome.runIds.join(', ')}. Stored ${outcome.stored.length} lesson(s).`];
  for (const lesson of outcome.stored) lines.push(`lesson ${lesson.id}: ${lesson.text}`, `  evidence: ${lesson.evidence.join(', ')}${lesson.appliesTo ? `; applies to: ${lesson.appliesTo}` : ''}`);
  if (outcome.dropped.length > 0) lines.push(`Left out ${outcome.dropped.length} lesson(s) whose evidence named runs that were not read: ${outcome.dropped.map((lesson) => lesson.evidence.join(', ')).join('; ')}.`);
  return `${lines.join('\n')}\n`;
}

/**
 * `archon dream`: the Dreamer over every finished run not dreamt yet, in this process; prints what it
 * stored. Exit 0 when it ran (also with nothing to dream), 1 when the model's answer could not be read;
 * an unreachable model server is an error (exit 2) from the probe.
 */
export async function dreamFromCli(runtime: ArchonRuntime, flags: DreamFlags): Promise<number> {
  const settings = runtime.store.getSettings();
  const options = runOptionsFrom(runtime, flags);
  const apiKey = apiKeyFromCommandLine(flags, runtime.store.secrets);
  const connect = modelConnector({ apiKeyFor: () => apiKey, retry: retryPolicyFrom(settings), contextLength: () => settings.contextLength });
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  try {
    const outcome = await dream({
      runs: runtime.store.runs,
      dreams: runtime.store.dreams,
      memory: runtime.store.memory,
      connect: async (signal) => {
        const { probe, model } = await connect(options, signal);
        return { model, mode: probe.toolCalling ? 'native' : 'text' };
      },
      signal: controller.signal,
      now: runtime.now,
    });
    process.stdout.write(describe(outcome));
    return outcome.unreadable === null ? 0 : 1;
  } finally {
    process.off('SIGINT', stop);
  }
}
