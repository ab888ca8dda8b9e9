import type { PlanStep } from '../../shared/schemas/plan';
import type { RunStatus } from '../../shared/schemas/run';
import { instructionLike, relevantMemorySection } from './recall';
import type { RunCapability, RunContext } from '../run/run-context';
import type { RunEnding } from '../run/hooks';

/** An episode keeps each step's result and the answer up to this many characters. */
const EPISODE_PART_CHARS = 1500;
const EPISODE_CHARS = 12_000;
const FACT_CHARS = 6000;

function clip(text: string, chars: number): string {
  return text.length > chars ? `${text.slice(0, chars)}…` : text;
}

/**
 * The memories most relevant to `query`, as the request's "Relevant memory" section; `memory.recalled`
 * names them (stored before announced). Null when memory is off or nothing was recalled.
 */
async function recallFor(context: RunContext, query: string, stepId: string | null): Promise<string | null> {
  if (!context.memory) return null;
  const recalled = await context.memory.recall(query, context.signal, { runId: context.runId, planning: stepId === null });
  if (recalled.length === 0) return null;
  context.events.append(context.runId, 'memory.recalled', {
    ...(stepId === null ? {} : { stepId }),
    items: recalled.map((entry) => ({ id: entry.item.id, kind: entry.item.kind, score: entry.score, source: entry.item.source })),
  });
  const flagged = recalled.filter((entry) => instructionLike(entry.item.text)).map((entry) => entry.item.id);
  if (flagged.length > 0) context.events.append(context.runId, 'memory.flagged', { ...(stepId === null ? {} : { stepId }), items: flagged });
  return relevantMemorySection(recalled);
}

/**
 * A completed step's result, kept as a fact with the run and step it came from. Called inside the
 * write that completes the step, so a `step.completed` announced has its fact on disk.
 */
function rememberStepResult(context: RunContext, step: PlanStep, result: string): void {
  if (!context.memory || result.trim() === '') return;
  context.memory.remember({ kind: 'fact', text: clip(`${step.description}\nResult: ${result}`, FACT_CHARS), source: { runId: context.runId, stepId: step.id } });
}

function verdictLines(context: RunContext): string[] {
  return context.runs.events(context.runId, Number.MAX_SAFE_INTEGER).flatMap((event) => {
    if (event.type === 'validation.completed') return [`- ${event.stepId ?? 'plan'}: ${event.verdict}${event.reasons.length > 0 ? ` (${event.reasons.join(' ')})` : ''}`];
    if (event.type === 'step.retried') return [`- ${event.stepId}: repair ${event.repair} because ${event.reason}`];
    return [];
  });
}

/**
 * The run's one episode, kept each time it ends (a resumed run's replaces the earlier), however it ended but paused: goal, plan, results, verdicts, failures with
 * causes, answer. The run's ending is already recorded: failing to keep the episode is only logged.
 */
function recordEpisode(context: RunContext, { status, ...outcome }: RunEnding): void {
  if (!context.memory || status === 'paused') return;
  try {
    context.memory.rememberEpisode(context.runId, episodeText(context, status, outcome));
  } catch (error) {
    context.log?.error({ err: error, runId: context.runId }, 'the run\'s episode could not be stored');
  }
}

function episodeText(context: RunContext, status: RunStatus, outcome: { answer?: string; error?: string }): string {
  const steps = context.runs.getSteps(context.runId).filter((step) => step.replacedIn === null);
  const lines = [
    `Run ${context.runId} ended ${status}.`,
    `Goal: ${context.goal}`,
    'Plan and step results:',
    ...(steps.length > 0 ? steps.map((step) => `- ${step.spec.id} (${step.status}): ${step.spec.description}${step.result ? `\n  Result: ${clip(step.result, EPISODE_PART_CHARS)}` : ''}${step.error ? `\n  Failed because: ${clip(step.error, EPISODE_PART_CHARS)}` : ''}`) : ['(no plan was made)']),
  ];
  const verdicts = verdictLines(context);
  if (verdicts.length > 0) lines.push('Verdicts and repairs:', ...verdicts);
  if (outcome.error) lines.push(`Why it ended: ${clip(outcome.error, EPISODE_PART_CHARS)}`);
  if (outcome.answer) lines.push(`Answer: ${clip(outcome.answer, EPISODE_PART_CHARS)}`);
  return clip(lines.join('\n'), EPISODE_CHARS);
}

/** Long-term memory: recalled into the plan's and each step's brief, and kept from step results and the run's episode. */
export const memory: RunCapability = {
  name: 'memory',
  hooks: {
    beforePlan: (context) => recallFor(context, context.goal, null),
    beforeStep: (context, step) => recallFor(context, `${step.description}\n${context.goal}`, step.id),
    stepCompleted: rememberStepResult,
    runEnded: recordEpisode,
  },
};
