import type { Detection } from '../shared/schemas/audit';
import type { RunEvent } from '../shared/schemas/events';
import type { Criterion } from '../shared/schemas/goal-contract';
import type { AuditedEvent } from './detectors';

/*
 * Done means done: a run that completes under a contract must show, in an outcome check after the
 * contract's last statement, that every criterion was met; a run that completes with gaps must have
 * the operator's word on them (an approved `outcome` approval, which every policy asks for).
 */

type Event<T extends RunEvent['type']> = Extract<RunEvent, { type: T }>;
type Of<T extends RunEvent['type']> = AuditedEvent & { event: Event<T> };

const cite = (item: AuditedEvent) => ({ record: item.seq, event: item.event.type, eventSeq: item.event.seq });
const named = (criteria: readonly Criterion[]) => criteria.map((criterion) => `${criterion.id} "${criterion.text}"`).join('; ');

/** What a completion is judged against: the contract as last stated, and what came after it. */
interface Course {
  contract: Of<'contract.ready'> | null;
  /** The last outcome check after the contract's last statement. */
  check: Of<'outcome.checked'> | null;
  /** Outcome approvals asked since the last check, and the answer that approved one. */
  asked: Set<string>;
  approval: AuditedEvent | null;
}

/** The contract's criteria the check does not show met: judged unmet, or not judged at all. */
function unproven(contract: Event<'contract.ready'>, check: Event<'outcome.checked'> | undefined): Criterion[] {
  if (!check) return contract.contract.criteria;
  const met = new Map(check.criteria.map((outcome) => [outcome.id, outcome.met]));
  return contract.contract.criteria.filter((criterion) => met.get(criterion.id) === false || !met.has(criterion.id));
}

/** A completion without gaps: high when the check is missing, names gaps or an unmet criterion; medium per criterion it could not judge. */
function provenFindings(completed: AuditedEvent, contract: Of<'contract.ready'>, check: Of<'outcome.checked'> | null): Detection[] {
  const lacking = unproven(contract.event, check?.event);
  const evidence = [cite(contract), ...(check ? [cite(check)] : []), cite(completed)];
  const findings: Detection[] = [];
  if (!check || lacking.length > 0 || check.event.gaps.length > 0) {
    const why = !check ? 'no outcome check followed its contract' : check.event.gaps.length > 0 ? `its outcome check named gaps (${check.event.gaps.join('; ')})` : 'its outcome check did not show every criterion met';
    findings.push({
      detector: 'outcome',
      severity: 'high',
      title: 'Run completed without evidence for its success criteria',
      explanation: `The run completed as done, but ${why}.${lacking.length > 0 ? ` Criteria without evidence: ${named(lacking)}.` : ''}`,
      evidence,
    });
  }
  for (const outcome of check?.event.criteria.filter((entry) => entry.met === null) ?? []) {
    const criterion = contract.event.contract.criteria.find((entry) => entry.id === outcome.id);
    findings.push({
      detector: 'outcome',
      severity: 'medium',
      title: `Success criterion ${outcome.id} could not be judged`,
      explanation: `The outcome check could not tell whether ${criterion ? named([criterion]) : outcome.id} held${outcome.detail ? ` (${outcome.detail})` : ''}, yet the run completed as done.`,
      evidence,
    });
  }
  return findings;
}

/** A completion with gaps: a note listing them, and high without an approved outcome approval before it. */
function gapsFindings(completed: Of<'run.completed'>, course: Course): Detection[] {
  const gaps = completed.event.gaps ?? [];
  const findings: Detection[] = [
    {
      detector: 'outcome',
      severity: 'low',
      title: `Run completed with ${gaps.length} accepted gap(s)`,
      explanation: `What the run did not do, accepted as gaps: ${gaps.join('; ')}.`,
      evidence: [...(course.approval ? [cite(course.approval)] : []), cite(completed)],
    },
  ];
  if (!course.approval) {
    findings.push({
      detector: 'outcome',
      severity: 'high',
      title: "Gaps were accepted without the operator's word",
      explanation: `The run completed with gaps (${gaps.join('; ')}), but no approved outcome approval after its outcome check precedes it; every policy asks the operator first.`,
      evidence: [...(course.check ? [cite(course.check)] : []), cite(completed)],
    });
  }
  return findings;
}

/**
 * For each `run.completed`: unproven_completion (high), unjudged_criterion (medium), accepted_gaps (low) and
 * gaps_without_approval (high). A run without a contract, or with one of no criteria, is judged only on its gaps.
 */
export function outcomeFindings(events: readonly AuditedEvent[]): Detection[] {
  const findings: Detection[] = [];
  const course: Course = { contract: null, check: null, asked: new Set(), approval: null };
  for (const item of events) {
    const event = item.event;
    if (event.type === 'contract.ready' || event.type === 'outcome.checked') {
      // A new contract or check asks anew: answers given before it accepted other gaps.
      course.contract = event.type === 'contract.ready' ? (item as Of<'contract.ready'>) : course.contract;
      course.check = event.type === 'outcome.checked' ? (item as Of<'outcome.checked'>) : null;
      course.asked.clear();
      course.approval = null;
    } else if (event.type === 'approval.requested' && event.kind === 'outcome') course.asked.add(event.approvalId);
    else if (event.type === 'approval.resolved' && course.asked.has(event.approvalId) && event.status === 'approved' && event.decision.verdict === 'approve') course.approval = item;
    else if (event.type === 'run.completed') {
      const completed = item as Of<'run.completed'>;
      if ((event.gaps ?? []).length > 0) findings.push(...gapsFindings(completed, course));
      else if (course.contract && course.contract.event.contract.criteria.length > 0) findings.push(...provenFindings(item, course.contract, course.check));
    }
  }
  return findings;
}
