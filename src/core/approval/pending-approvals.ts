import { ArchonError } from '../../shared/errors';
import type { ApprovalDecision, ApprovalRequest, ApprovalStatus, OperatorChannel } from '../../shared/schemas/approval';
import type { ApprovalChannel } from './approval-channel';

interface Waiting {
  request: ApprovalRequest;
  resolve(decision: ApprovalDecision): void;
}

/**
 * The app's human channel: requests wait here until a person answers through the UI (a click sent
 * over IPC or the host's socket). An answer must name the exact action it approves (its hash); an
 * answer to a request that expired or was already answered is refused and changes nothing.
 */
export class PendingApprovals implements ApprovalChannel {
  readonly canRaiseBudgets = true;
  private readonly waiting = new Map<string, Waiting>();
  private readonly listeners = new Set<() => void>();

  /** `channel`: the desktop app's window, or the page `archon serve` serves (the host decides which answers here). */
  constructor(
    private readonly statusOf: (approvalId: string) => ApprovalStatus | null,
    readonly channel: Extract<OperatorChannel, 'app' | 'page'> = 'app',
  ) {}

  decide(request: ApprovalRequest, options: { signal: AbortSignal }): Promise<ApprovalDecision> {
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.waiting.delete(request.id);
        this.changed();
        reject(options.signal.reason);
      };
      this.waiting.set(request.id, {
        request,
        resolve: (decision) => {
          options.signal.removeEventListener('abort', onAbort);
          resolve(decision);
        },
      });
      options.signal.addEventListener('abort', onAbort, { once: true });
      this.changed();
    });
  }

  /** Oldest first. */
  list(): ApprovalRequest[] {
    return [...this.waiting.values()].map((entry) => entry.request).sort((a, b) => a.requestedAt.localeCompare(b.requestedAt));
  }

  answer(approvalId: string, actionHash: string, decision: ApprovalDecision): void {
    const entry = this.waiting.get(approvalId);
    if (!entry) {
      const status = this.statusOf(approvalId);
      if (status === 'expired') throw new ArchonError('APPROVAL_EXPIRED', 'This request expired before it was answered and counted as rejected; deciding it now changes nothing.');
      if (status === null) throw new ArchonError('NOT_FOUND', `There is no approval request ${approvalId}.`);
      throw new ArchonError('VALIDATION_FAILED', `This request was already answered (${status}).`);
    }
    if (entry.request.actionHash !== actionHash) {
      throw new ArchonError('VALIDATION_FAILED', 'The decision names a different action than the one pending (hash mismatch); reload the request and decide again.');
    }
    this.waiting.delete(approvalId);
    this.changed();
    entry.resolve(decision);
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}
