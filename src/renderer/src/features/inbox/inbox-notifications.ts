import { inboxNotice } from '../../../../shared/inbox-notice';
import type { InboxItem } from '../../../../shared/schemas/run-order';

const supported = () => typeof Notification !== 'undefined';

/** A notification for a run that lands in the inbox while the page is hidden or not focused; clicking it brings the page back. */
export function notifyInboxItem(item: InboxItem): void {
  if (!supported() || Notification.permission !== 'granted' || (!document.hidden && document.hasFocus())) return;
  const { title, body } = inboxNotice(item);
  const notice = new Notification(title, { body, tag: `inbox-${item.run.id}` });
  notice.onclick = () => window.focus();
}
