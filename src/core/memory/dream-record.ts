import type { RunEvent } from '../../shared/schemas/events';
import type { RunStatus, RunSummary } from '../../shared/schemas/run';
import { MIN_PROGRESS } from '../../shared/gap-trend';
import { capObservation } from '../model/observation';
import type { RunStore } from '../store/run-store';

/** Runs over for good: what they did is settled, so the Dreamer may learn from them (a paused or stopped run may still be resumed). */
export const DREAMABLE_STATUSES: ReadonlySet<RunStatus> = new Set(['completed', 'completed_with_gaps', 'failed', 'rejected', 'budget_exhausted']);

const MAX_RESULT_CHARS = 400;

/** The re-plans the Goal Gradient Solver penalised: the gap at the next failure was not MIN_PROGRESS below the one the re-plan answered. */
function penalisedRevisions(events: readonly RunEvent[]): string[] {
  const lines: string[] = [];
  let baseline: number | null = null;
  let pending: Extract<RunEvent, { type: 'plan.revised' }> | null = null;
  for (const event of events) {
    if (event.type === 'plan.revised') pending = event;
    if (event.type !== 'goal.progress' || event.after === 'repair') continue;
    if (pending && baseline !== null && event.gap - baseline > -MIN_PROGRESS) {
      lines.push(`Penalised decomposition: revision ${pending.revision} (${pending.replaced.join(', ')} replaced by ${pending.added.join(', ')}) left the gap to the goal at ${event.gap} from ${baseline}.`);
    }
    pending = null;
    baseline = event.gap;
  }
  return lines;
}

/** What the records say happened to each step, in order: verdicts, repairs and failures with their reasons verbatim. */
function stepLines(events: readonly RunEvent[]): string[] {
  const lines: string[] = [];
  for (const event of events) {
    if (event.type === 'validation.completed' && event.stepId !== null && event.verdict === 'fail') lines.push(`Verdict on ${event.stepId}: fail: ${event.reasons.join(' ')}`);
    if (event.type === 'step.retried') lines.push(`Repair ${event.repair} of ${event.stepId}: ${event.reason}`);
    if (event.type === 'step.failed') lines.push(`Step ${event.stepId} failed: ${event.reason}`);
    if (event.type === 'step.completed') lines.push(`Step ${event.stepId} completed: ${capObservation(event.result, MAX_RESULT_CHARS)}`);
    if (event.type === 'plan.revised') lines.push(`Re-plan ${event.revision}: ${event.replaced.join(', ')} replaced by ${event.added.join(', ')} because: ${event.reason}`);
  }
  return lines;
}

/** How the run ended: its answer (with the gaps the operator accepted, from its `run.completed`), or why it ended without one. */
function endingLines(summary: RunSummary, events: readonly RunEvent[]): string[] {
  if (summary.status !== 'completed' && summary.status !== 'completed_with_gaps') return [`Ended ${summary.status}: ${summary.error ?? 'no reason was recorded'}`];
  const gaps = events.findLast((event) => event.type === 'run.completed')?.gaps ?? [];
  return [`Answer: ${capObservation(summary.answer ?? '', MAX_RESULT_CHARS)}`, ...(gaps.length > 0 ? [`Accepted gaps: ${gaps.join('; ')}`] : [])];
}

/**
 * One finished run as the Dreamer reads it: its goal, plan, what each step did, and every failure,
 * verdict and repair with the reason the records give, verbatim, so a lesson can cite no other cause.
 */
export function dreamRecord(runs: RunStore, runId: string): string | null {
  const run = runs.getRun(runId);
  if (!run) return null;
  const events = runs.events(runId, Number.MAX_SAFE_INTEGER);
  const plan = [...events].reverse().find((event) => event.type === 'plan.ready' || event.type === 'plan.revised');
  const steps = plan && 'plan' in plan ? plan.plan.steps.map((step) => `  ${step.id}: ${step.description}${step.dependencies.length > 0 ? ` (after ${step.dependencies.join(', ')})` : ''}`) : [];
  const { summary } = run;
  return [
    `Run ${runId} (${summary.status})`,
    `Goal: ${summary.goal}`,
    ...(steps.length > 0 ? ['Plan:', ...steps] : []),
    ...stepLines(events),
    ...penalisedRevisions(events),
    ...endingLines(summary, events),
  ].join('\n');
}
