import { conflictAnswerWinner, parseSettledConflict } from '../../shared/schemas/bus';
import type { RunStatus } from '../../shared/schemas/run';
import { instructionLike, relevantMemorySection } from './recall';
import type { RunCapability, RunContext } from '../run/run-context';
import type { RunEnding } from '../run/hooks';
import { fenced, fenceNonce, RECALLED_MEMORY } from '../provenance/spotlight';

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
  // Memories are kept from earlier runs, which may have read untrusted text: data for the model, never instructions.
  const section = relevantMemorySection(recalled);
  return section === null ? null : fenced(fenceNonce(context), RECALLED_MEMORY, section);
}

/**
 * The steps whose results lost a conflict: the coordinator's broadcast decision names the vote's
 * winner; an escalated conflict's winner is the operator's answer to it.
 */
function outvotedSteps(context: RunContext): Set<string> {
  const messages = context.bus.messages(context.runId).map((message) => message.envelope);
  const answers = new Map(messages.filter((envelope) => envelope.kind === 'decision' && envelope.to === 'coordinator').map((envelope) => [envelope.correlationId, conflictAnswerWinner(envelope.body)]));
  const outvoted = new Set<string>();
  for (const envelope of messages) {
    if (envelope.from !== 'coordinator' || (envelope.kind !== 'decision' && envelope.kind !== 'escalation')) continue;
    const conflict = parseSettledConflict(envelope.body);
    const winner = conflict?.winner ?? answers.get(envelope.id);
    if (!conflict || winner === undefined) continue;
    for (const ballot of conflict.vote.ballots) if (ballot.stepId !== winner) outvoted.add(ballot.stepId);
  }
  return outvoted;
}

/**
 * Once the run's outcome was accepted (it completed), each result its answer stands on is kept as a
 * fact with the run and step it came from: a step of the final plan (not replaced by a re-plan),
 * completed, not waived and not outvoted. Nothing is kept from a run that ended any other way.
 */
function rememberAcceptedResults(context: RunContext, status: RunStatus): void {
  if (!context.memory || status !== 'completed') return;
  try {
    const outvoted = outvotedSteps(context);
    const facts = context.runs
      .getSteps(context.runId)
      .filter((step) => step.status === 'completed' && step.replacedIn === null && !step.waived && !outvoted.has(step.spec.id) && (step.result ?? '').trim() !== '')
      .map((step) => ({ stepId: step.spec.id, text: clip(`${step.spec.description}\nResult: ${step.result ?? ''}`, FACT_CHARS) }));
    context.memory.rememberStepFacts(context.runId, facts);
  } catch (error) {
    context.log?.error({ err: error, runId: context.runId }, "the run's step results could not be kept in memory");
  }
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
function recordEpisode(context: RunContext, status: RunStatus, outcome: { answer?: string; error?: string }): void {
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

function rememberRun(context: RunContext, { status, ...outcome }: RunEnding): void {
  rememberAcceptedResults(context, status);
  recordEpisode(context, status, outcome);
}

/** Long-term memory: recalled into the plan's and each step's brief, and kept from an accepted run's step results and every run's episode. */
export const memory: RunCapability = {
  name: 'memory',
  hooks: {
    beforePlan: (context) => recallFor(context, context.goal, null),
    beforeStep: (context, step) => recallFor(context, `${step.description}\n${context.goal}`, step.id),
    runEnded: rememberRun,
  },
};
