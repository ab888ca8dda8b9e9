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

/** The time a retry loop reads and waits on: the real one, or a test's. */
export interface RetryClock {
  now(): number;
  /** Waits `ms`; a stop ends the wait at once, as CANCELLED (or the stop's own error). */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  random(): number;
}

export const SYSTEM_CLOCK: RetryClock = { now: () => Date.now(), sleep: (ms, signal) => abortableSleep(ms, signal), random: () => Math.random() };

/**
 * One call's retries: backoff until the window, counted from the first failure, is spent. The last
 * wait is cut to what is left of the window, so the call gives up neither early nor late.
 */
export class RetryWindow {
  private readonly startedAt: number;
  private firstFailureAt: number | null = null;
  private retries = 0;

  constructor(
    private readonly policy: RetryPolicy,
    private readonly clock: RetryClock = SYSTEM_CLOCK,
  ) {
    this.startedAt = clock.now();
  }

  /** After a failed attempt: waits and returns true, or returns false at once when the window is spent. */
  async waitToRetry(retryAfterMs: number | null, signal: AbortSignal): Promise<boolean> {
    const now = this.clock.now();
    this.firstFailureAt ??= now;
    const left = this.policy.windowMs - (now - this.firstFailureAt);
    if (left <= 0) return false;
    const delay = backoffDelay(this.policy, this.retries++, retryAfterMs, () => this.clock.random());
    await this.clock.sleep(Math.min(delay, left), signal);
    return true;
  }

  /** From the first attempt until now: how long the server went without answering. */
  elapsedMs(): number {
    return this.clock.now() - this.startedAt;
  }
}

/** The retry window is spent: the run pauses, saying how long the server went without answering. */
export function modelUnavailable(baseUrl: string, waitedMs: number, attempts: number, reason: string, cause: unknown): ArchonError {
  return new ArchonError(
    'MODEL_UNAVAILABLE',
    `The model server at ${baseUrl} did not answer for ${describeWait(waitedMs)} (${attempts} attempt${attempts === 1 ? '' : 's'}; last: ${reason}). The run is paused: ` +
      'check that the server is running and has the model loaded, then resume the run.',
    { cause },
  );
}

/** A span of waiting as a person reads it: tenths of a second under 10 s, whole seconds above. */
function describeWait(ms: number): string {
  return ms < 10_000 ? `${(Math.max(0, ms) / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
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
