import type { InboxItem } from './schemas/run-order';

const BODY_CHARS = 120;

/** What a desktop notification says when a run lands in the inbox (the same in Electron and in the browser): its goal, long ones ending in an ellipsis. */
export function inboxNotice(item: Pick<InboxItem, 'run'>): { title: string; body: string } {
  const flat = item.run.goal.replace(/\s+/g, ' ').trim();
  return { title: 'Archon: a run is in your inbox', body: flat.length > BODY_CHARS ? `${flat.slice(0, BODY_CHARS - 1)}…` : flat };
}
