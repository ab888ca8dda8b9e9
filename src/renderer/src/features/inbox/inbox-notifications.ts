import type { InboxItem } from '../../../../shared/schemas/run-order';

const BODY_CHARS = 120;

const supported = () => typeof Notification !== 'undefined';

/** The goal as a notification's body: long goals end in an ellipsis. */
function bodyOf(goal: string): string {
  const flat = goal.replace(/\s+/g, ' ').trim();
  return flat.length > BODY_CHARS ? `${flat.slice(0, BODY_CHARS - 1)}…` : flat;
}

/** A notification for a run that lands in the inbox while the page is hidden or not focused; clicking it brings the page back. */
export function notifyInboxItem(item: InboxItem): void {
  if (!supported() || Notification.permission !== 'granted' || (!document.hidden && document.hasFocus())) return;
  const notice = new Notification('Archon: a run is in your inbox', { body: bodyOf(item.run.goal), tag: `inbox-${item.run.id}` });
  notice.onclick = () => window.focus();
}
