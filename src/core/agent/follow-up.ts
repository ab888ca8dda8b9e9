import type { RunStore } from '../store/run-store';
import { capObservation } from '../model/observation';
import type { RunContext } from '../run/run-context';
import { earlierRunName, fenced, fenceNonce } from '../provenance/spotlight';
import { earlierRunOf } from '../provenance/step-provenance';

/** The earlier answer is carried verbatim up to this many characters. */
export const EARLIER_ANSWER_CHARS = 8000;

/**
 * What a follow-up run knows of the run it continues, under the heading "Earlier run": its goal,
 * its plan, and its answer verbatim (capped). Null for a run that follows up on none. The hosts
 * check that the earlier run exists before a follow-up starts.
 */
export function earlierRunBrief(runs: RunStore, earlierRunId: string | undefined): string | null {
  if (!earlierRunId) return null;
  const earlier = runs.getRun(earlierRunId);
  // Deleted since this run started: the run goes on without it rather than fail on resume.
  if (!earlier) return `Earlier run: ${earlierRunId} was deleted; nothing of it is known.`;
  const steps = runs.getSteps(earlierRunId).filter((step) => step.replacedIn === null);
  return [
    'Earlier run (this goal follows up on it; build on what it did):',
    `Goal: ${earlier.summary.goal}`,
    'Plan:',
    ...(steps.length > 0 ? steps.map((step) => `- ${step.spec.id}: ${step.spec.description} (${step.status})`) : ['(no plan was made)']),
    'Answer:',
    earlier.summary.answer === null ? `(no answer: the run ended ${earlier.summary.status})` : capObservation(earlier.summary.answer, EARLIER_ANSWER_CHARS),
  ].join('\n');
}

/**
 * What the plan's or a step's brief carries before its goal: this follow-up's earlier run, fenced as
 * data (its answer may rest on pages and files it read), then the capabilities' sections (recalled
 * memory comes fenced from its capability; the goal's contract is the operator's).
 */
export function briefBackground(context: RunContext, sections: string | null): string[] {
  const earlier = earlierRunOf(context);
  return [...(earlier ? [fenced(fenceNonce(context), earlierRunName(earlier.runId), earlier.brief)] : []), ...(sections ? [sections] : [])];
}
