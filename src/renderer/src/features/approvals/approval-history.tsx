import type { ApprovalKind, ApprovalStatus, Decider } from '../../../../shared/schemas/approval';
import type { RunEvent } from '../../../../shared/schemas/events';

export interface AnsweredRequest {
  approvalId: string;
  kind: ApprovalKind;
  summary: string;
  status: ApprovalStatus;
  /** Absent while the request waits, and in runs recorded before who decided was kept. */
  decider: Decider | null;
}

const OPERATOR_AT = { app: 'the operator, in the app', terminal: 'the operator, at the terminal', page: 'the operator, in the browser page', cluster: 'the operator, with archon approve' } as const;

const DECIDED_BY = { operator: 'the operator', rule: 'the --approve rule', policy: 'the policy', grant: 'a grant for this run', expiry: 'no one: it expired' } as const;

/** Who decided, in words. */
export function deciderText(decider: Decider): string {
  return decider.decidedBy === 'operator' && decider.channel ? OPERATOR_AT[decider.channel] : DECIDED_BY[decider.decidedBy];
}

/** A run's approval requests, oldest first, each with its answer and who gave it once there is one. */
export function approvalHistory(events: readonly RunEvent[]): AnsweredRequest[] {
  const byId = new Map<string, AnsweredRequest>();
  for (const event of events) {
    if (event.type === 'approval.requested') byId.set(event.approvalId, { approvalId: event.approvalId, kind: event.kind, summary: event.summary, status: 'pending', decider: null });
    else if (event.type === 'approval.resolved') {
      const asked = byId.get(event.approvalId);
      const decider = event.decidedBy ? { decidedBy: event.decidedBy, ...(event.channel ? { channel: event.channel } : {}) } : null;
      if (asked) byId.set(event.approvalId, { ...asked, status: event.status, decider });
    }
  }
  return [...byId.values()];
}

/** The selected run's approvals: what was asked, the answer, and who decided it. */
export function ApprovalHistory({ events }: { events: readonly RunEvent[] }) {
  const history = approvalHistory(events);
  if (history.length === 0) return <p className="empty">No approvals were asked in this run.</p>;
  return (
    <ol className="approval-history" aria-label="Approval history">
      {history.map((entry) => (
        <li key={entry.approvalId}>
          <strong>{entry.kind.replaceAll('_', ' ')}</strong> {entry.summary} — {entry.status}
          {entry.decider && <span className="decided-by"> (decided by {deciderText(entry.decider)})</span>}
        </li>
      ))}
    </ol>
  );
}
