import { approvalNotice } from '../shared/approval-notice';
import { arrivalTracker } from '../shared/arrivals';
import { inboxNotice } from '../shared/inbox-notice';
import type { CommandContext, CommandHandlers } from '../shared/ipc/dispatch';
import type { Notice, Notify } from './window-notice';

/** A list handler that also notifies each item arrived since its earlier answers. */
function noticing<I, T>(list: (input: I, context: CommandContext) => Promise<T[]>, idOf: (item: T) => string, noticeOf: (item: T) => Notice, notify: Notify) {
  const arrivals = arrivalTracker(idOf);
  let asked = 0;
  let heard = 0;
  return async (input: I, context: CommandContext): Promise<T[]> => {
    const call = ++asked;
    const answer = await list(input, context);
    // An answer overtaken by a later call's is stale: tracking it would announce again what that call saw.
    if (call > heard) {
      heard = call;
      for (const item of arrivals(answer)) notify(noticeOf(item));
    }
    return answer;
  };
}

/**
 * The handlers, with the approvals waiting on the cluster and the inbox notified as they arrive in
 * the page's reads: no event of this desk announces them, and Electron denies the page's own notifications.
 */
export function withArrivalNotices(handlers: CommandHandlers, notify: Notify): CommandHandlers {
  return {
    ...handlers,
    'clusterApprovals.list': noticing(handlers['clusterApprovals.list'], (request) => request.id, approvalNotice, notify),
    'inbox.list': noticing(handlers['inbox.list'], (item) => item.run.id, inboxNotice, notify),
  };
}
