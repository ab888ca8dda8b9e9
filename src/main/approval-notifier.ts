import { approvalNotice } from '../shared/approval-notice';
import type { ArchonEvent } from '../shared/schemas/events';
import type { Notify } from './window-notice';

/** A desktop notification for each approval this desk's runs ask (see windowNotifier for when one shows). */
export function approvalNotifier(notify: Notify): (event: ArchonEvent) => void {
  return (event) => {
    if (event.type === 'approval.requested') notify(approvalNotice(event));
  };
}
