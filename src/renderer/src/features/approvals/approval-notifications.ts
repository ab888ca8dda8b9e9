import { approvalNotice } from '../../../../shared/approval-notice';
import type { ApprovalRequest } from '../../../../shared/schemas/approval';
import type { ArchonEvent } from '../../../../shared/schemas/events';

const supported = () => typeof Notification !== 'undefined';

/** Asked on a click (browsers allow the prompt only on a user gesture); Electron denies it and notifies from main instead. */
export function askNotificationPermission(): void {
  if (supported() && Notification.permission === 'default') void Notification.requestPermission();
}

/** A notification for an approval that arrives while the page is hidden or not focused; clicking it brings the page back. */
export function notifyApproval(event: ArchonEvent): void {
  if (event.type === 'approval.requested') notifyApprovalRequest({ ...event, id: event.approvalId });
}

/** The same for a request read from where it waits (the cluster's, which no event of this desk announces). */
export function notifyApprovalRequest(request: Pick<ApprovalRequest, 'id' | 'kind' | 'runId' | 'summary'>): void {
  if (!supported() || Notification.permission !== 'granted' || (!document.hidden && document.hasFocus())) return;
  const { title, body } = approvalNotice(request);
  const notice = new Notification(title, { body, tag: request.id });
  notice.onclick = () => window.focus();
}
