import { sleep } from '../../shared/abort';
import { ArchonError } from '../../shared/errors';

/**
 * How long a model call waits and how long it keeps trying. Connection errors, 429, 5xx and stalls
 * are retried with backoff until `windowMs` has passed since the first failure; then the run pauses.
 */
export interface RetryPolicy {
  windowMs: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** From sending the request to the first streamed chunk: local servers may be loading the model. */
  firstByteTimeoutMs: number;
  /** Between two chunks of a stream. */
  idleTimeoutMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { windowMs: 120_000, baseDelayMs: 500, maxDelayMs: 8000, firstByteTimeoutMs: 300_000, idleTimeoutMs: 60_000 };

/** The policy the operator's settings give. */
export function retryPolicyFrom(settings: { modelFirstByteTimeoutSeconds: number; modelIdleTimeoutSeconds: number; modelRetryWindowSeconds: number }): RetryPolicy {
  return {
    ...DEFAULT_RETRY_POLICY,
    windowMs: settings.modelRetryWindowSeconds * 1000,
    firstByteTimeoutMs: settings.modelFirstByteTimeoutSeconds * 1000,
    idleTimeoutMs: settings.modelIdleTimeoutSeconds * 1000,
  };
}

/** A hard bound on attempts, whatever the window: every loop is bounded. */
export const MAX_ATTEMPTS = 1000;

/** Exponential backoff with full jitter; a server's Retry-After wins when it asks for longer. */
export function backoffDelay(policy: RetryPolicy, retry: number, retryAfterMs: number | null, random: () => number = Math.random): number {
  const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  const jittered = exponential / 2 + random() * (exponential / 2);
  return Math.max(Math.min(policy.maxDelayMs, jittered), retryAfterMs ?? 0);
}

/** Waits before a retry; a stop ends the wait at once, as CANCELLED (or the stop's own error). */
export async function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  try {
    await sleep(ms, signal);
  } catch {
    throw cancelled(signal);
  }
}

export function cancelled(signal: AbortSignal): ArchonError {
  const reason: unknown = signal.reason;
  if (ArchonError.isInstance(reason)) return reason;
  return new ArchonError('CANCELLED', reason instanceof Error ? reason.message : 'Cancelled.');
}
