import type { RunEvent } from './schemas/events';

type ApprovalRequested = Extract<RunEvent, { type: 'approval.requested' }>;

/** What a desktop notification says when an approval waits (the same in Electron and in the browser). */
export function approvalNotice(request: Pick<ApprovalRequested, 'kind' | 'runId' | 'summary'>): { title: string; body: string } {
  return { title: `Archon: approval waiting (${request.kind.replace('_', ' ')})`, body: `Run ${request.runId.slice(0, 8)}: ${request.summary}` };
}
