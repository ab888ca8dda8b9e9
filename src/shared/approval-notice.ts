import type { RunEvent } from './schemas/events';

type ApprovalRequested = Extract<RunEvent, { type: 'approval.requested' }>;

/** What a desktop notification says when an approval waits (the same in Electron and in the browser). */
export function approvalNotice(event: ApprovalRequested): { title: string; body: string } {
  return { title: `Archon: approval waiting (${event.kind.replace('_', ' ')})`, body: `Run ${event.runId.slice(0, 8)}: ${event.summary}` };
}
