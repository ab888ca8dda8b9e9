import { ArchonError } from '../../shared/errors';

export interface RetryPolicy {
  /** Retries after the first attempt. */
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { retries: 3, baseDelayMs: 500, maxDelayMs: 8000 };

/** Exponential backoff with full jitter; a server's Retry-After wins when it asks for longer. */
export function backoffDelay(policy: RetryPolicy, retry: number, retryAfterMs: number | null, random: () => number = Math.random): number {
  const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  const jittered = exponential / 2 + random() * (exponential / 2);
  return Math.min(policy.maxDelayMs, Math.max(jittered, retryAfterMs ?? 0));
}

export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(cancelled(signal));
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(cancelled(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

export function cancelled(signal: AbortSignal): ArchonError {
  const reason: unknown = signal.reason;
  if (ArchonError.isInstance(reason)) return reason;
  return new ArchonError('CANCELLED', reason instanceof Error ? reason.message : 'Cancelled.');
}
