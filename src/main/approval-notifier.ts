import type { BrowserWindow, Notification } from 'electron';
import { approvalNotice } from '../shared/approval-notice';
import type { ArchonEvent } from '../shared/schemas/events';

/** A desktop notification when an approval waits and the window is not focused; clicking it brings the window back. */
export function approvalNotifier(NotificationClass: typeof Notification, window: BrowserWindow): (event: ArchonEvent) => void {
  return (event) => {
    if (event.type !== 'approval.requested' || window.isFocused() || !NotificationClass.isSupported()) return;
    const notice = new NotificationClass(approvalNotice(event));
    notice.on('click', () => {
      if (window.isMinimized()) window.restore();
      window.focus();
    });
    notice.show();
  };
}
