import type { RunEvent } from '../../../../shared/schemas/events';
import type { Criterion, CriterionOutcome, OutcomeAction } from '../../../../shared/schemas/goal-contract';
import type { RunStatus } from '../../../../shared/schemas/run';

/** A status in words: `completed_with_gaps` reads "completed with gaps". */
export function statusLabel(status: RunStatus): string {
  return status.replaceAll('_', ' ');
}

/** What kind of check a criterion is, in words, with what it names. */
export function criterionKindText(criterion: Criterion): string {
  switch (criterion.kind) {
    case 'file_written':
      return `file written: ${criterion.path}`;
    case 'command_succeeds':
      return `command succeeds: ${criterion.command}`;
    case 'answer_format':
      return criterion.format === 'json' ? 'answer is JSON' : 'answer is a number';
    case 'answer_mentions':
      return `answer mentions ${criterion.value}`;
    case 'judged':
      return 'judged';
  }
}

/** One criterion's outcome in words, never by colour alone. */
export function outcomeText(outcome: CriterionOutcome | undefined): string {
  if (!outcome || outcome.met === null) return 'not judged';
  return outcome.met ? 'met' : 'not met';
}

export type OutcomeChecked = Extract<RunEvent, { type: 'outcome.checked' }>;

/** The run's last outcome check, if one ran. */
export function lastOutcome(events: readonly RunEvent[]): OutcomeChecked | null {
  return events.findLast((event): event is OutcomeChecked => event.type === 'outcome.checked') ?? null;
}

/** The gaps the operator accepted when the run ended `completed_with_gaps` (empty otherwise). */
export function acceptedGaps(events: readonly RunEvent[]): string[] {
  const completed = events.findLast((event) => event.type === 'run.completed');
  return completed?.type === 'run.completed' ? (completed.gaps ?? []) : [];
}

/** A criterion as text that does not depend on the order of its keys. */
function canonical(criterion: Criterion): string {
  return JSON.stringify(Object.entries(criterion).sort(([a], [b]) => a.localeCompare(b)));
}

/** Whether the operator changed the criteria: any added, removed, reordered or rewritten. */
export function criteriaChanged(before: readonly Criterion[], after: readonly Criterion[]): boolean {
  return before.length !== after.length || before.some((criterion, index) => canonical(criterion) !== canonical(after[index] as Criterion));
}

/** What approving an `outcome` request does: with gaps it accepts them; without, the check was only unsure and the answer stands. */
export function outcomeApproveHint(action: OutcomeAction): string {
  return action.gaps.length > 0 ? 'Approve accepts the gaps: the run ends completed with gaps.' : 'Approve gives the answer as it is; Reject ends the run failed.'
}
