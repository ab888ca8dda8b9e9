import type { RunStore } from '../store/run-store';
import { capObservation } from '../model/observation';

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
