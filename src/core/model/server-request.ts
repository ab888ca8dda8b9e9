import { parseJsonOrUndefined } from '../../shared/json';
import type { Usage } from './chat';

/** Why a request that is not a chat call of a run is made; sent as X-Archon-Purpose like the others. */
export type ServerRequestPurpose = 'probe' | 'embedding';

/** One HTTP request a model server received outside the run's chat calls: one `model_calls` row. */
export interface ServerRequest {
  purpose: ServerRequestPurpose;
  /** Method and path, with the answer's status: what the run's events say about it. */
  request: string;
  ok: boolean;
  error: string | null;
  usage: Usage;
  startedAt: string;
  endedAt: string;
}

/** Told of each request the server received; a promise when the record is written before the caller goes on. */
export type RequestSink = (request: ServerRequest) => void | Promise<void>;

export const NO_USAGE: Usage = { promptTokens: 0, completionTokens: 0, estimated: false };

/** Failures that happen before any server saw the request: nothing listening, no such host, no route. */
const NEVER_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'ERR_INVALID_URL']);

/** False when the error shows the request never reached a server (so no row is owed for it). */
export function reachedServer(error: unknown): boolean {
  for (let cause: unknown = error, depth = 0; cause && depth < 5; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && NEVER_SENT.has(code)) return false;
    cause = (cause as { cause?: unknown }).cause;
  }
  return true;
}

const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value) : 0);

function usageOf(answer: unknown): Usage | null {
  const usage = (answer as { usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } } | null)?.usage;
  return usage && typeof usage === 'object' ? { promptTokens: count(usage.prompt_tokens), completionTokens: count(usage.completion_tokens), estimated: false } : null;
}

/** Tokens an answer's body reports: a JSON body's `usage`, or the last `usage` of an event stream. */
export function usageInBody(body: string): Usage {
  const whole = usageOf(parseJsonOrUndefined(body));
  if (whole) return whole;
  const events = body.split('\n').filter((line) => line.startsWith('data:')).map((line) => usageOf(parseJsonOrUndefined(line.slice(5).trim())));
  return events.filter((usage) => usage !== null).at(-1) ?? NO_USAGE;
}

/** The text of an error for a row: the message alone. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function methodAndPath(input: Parameters<typeof fetch>[0], init: RequestInit | undefined): string {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  return `${(init?.method ?? 'GET').toUpperCase()} ${new URL(url).pathname}`;
}

/**
 * A fetch that sends X-Archon-Purpose and tells `sink` of every request a server received, once its
 * answer has been read (a stream to its end, so its usage is known). `answered(status)`: whether that
 * status is an answer the caller can use (an absent endpoint can be one). `settled()` waits until every
 * request made so far, those still in flight included, has been told.
 */
export function observedFetch(purpose: ServerRequestPurpose, sink: RequestSink | undefined, answered: (status: number) => boolean = (status) => status < 300) {
  const pending: Promise<void>[] = [];
  const observed: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('X-Archon-Purpose', purpose);
    const startedAt = new Date().toISOString();
    const request = methodAndPath(input, init);
    const record = (fields: Pick<ServerRequest, 'ok' | 'error' | 'usage'>, what: string): Promise<void> =>
      Promise.resolve(sink?.({ purpose, request: `${request}: ${what}`, ...fields, startedAt, endedAt: new Date().toISOString() }));
    const sent = fetch(input, { ...init, headers });
    pending.push(
      sent.then(
        async (response) => {
          const body = await response.clone().text().catch(() => '');
          const ok = answered(response.status);
          await record({ ok, error: ok ? null : `HTTP ${response.status}: ${body.slice(0, 500)}`, usage: usageInBody(body) }, `HTTP ${response.status}`);
        },
        (error: unknown) => (reachedServer(error) ? record({ ok: false, error: errorText(error), usage: NO_USAGE }, 'no answer') : undefined),
      ),
    );
    return sent;
  };
  const settled = async (): Promise<void> => {
    for (let seen = 0; seen < pending.length; ) {
      const batch = pending.slice(seen);
      seen = pending.length;
      await Promise.all(batch);
    }
  };
  return { fetch: observed, settled };
}
