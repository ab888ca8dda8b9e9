import type { RunStatus } from '../../shared/schemas/run';
import type { RunContext } from '../run/run-context';

/*
 * The run's working memory (docs/model-protocol.md, "Working memory"): facts its steps
 * hand each other, by key, in archon.db so a resumed run keeps them. A step's result is kept under
 * `step:<id>:result`, the facts its compactions kept verbatim under `step:<id>:facts`; a step's
 * brief carries the facts of the steps it depends on.
 */

/** Facts kept per step: the earliest win, like the note's. */
const MAX_FACTS = 100;

export const factKey = {
  result: (stepId: string) => `step:${stepId}:result`,
  facts: (stepId: string) => `step:${stepId}:facts`,
};

function storedFacts(context: RunContext, stepId: string): string[] {
  const value = context.runs.fact(context.runId, factKey.facts(stepId));
  return value ? (JSON.parse(value) as string[]) : [];
}

export function rememberResult(context: RunContext, stepId: string, result: string): void {
  context.runs.putFact(context.runId, factKey.result(stepId), result, context.now().toISOString());
}

export function rememberFacts(context: RunContext, stepId: string, facts: readonly string[]): void {
  const kept = [...new Set([...storedFacts(context, stepId), ...facts])].slice(0, MAX_FACTS);
  context.runs.putFact(context.runId, factKey.facts(stepId), JSON.stringify(kept), context.now().toISOString());
}

/** Lines for a step's brief: the facts its dependencies kept, verbatim. */
export function dependencyFacts(context: RunContext, dependencies: readonly string[]): string[] {
  return dependencies.flatMap((id) => {
    const facts = storedFacts(context, id);
    return facts.length > 0 ? [`- ${id}: ${facts.join('; ')}`] : [];
  });
}

/** Statuses a run cannot be resumed from: its working memory ends with it. */
const FINAL: readonly RunStatus[] = ['completed', 'completed_with_gaps', 'rejected'];

/**
 * When a run ends for good its working memory is cleared; a run whose outcome was accepted in full
 * (`completed`) first promotes the facts its compactions kept to long-term memory (one `fact` a step,
 * with its provenance). A run that can still be resumed keeps it; without memory nothing is promoted.
 */
export function endWorkingMemory(context: RunContext, status: RunStatus): void {
  if (!FINAL.includes(status)) return;
  if (status === 'completed') promoteFacts(context);
  context.runs.clearFacts(context.runId);
}

function promoteFacts(context: RunContext): void {
  const descriptions = new Map(context.runs.getSteps(context.runId).map((step) => [step.spec.id, step.spec.description]));
  for (const [stepId, description] of descriptions) {
    const facts = storedFacts(context, stepId);
    if (facts.length > 0) context.memory?.remember({ kind: 'fact', text: `${description}\nFacts kept: ${facts.join('; ')}`, source: { runId: context.runId, stepId } });
  }
}
