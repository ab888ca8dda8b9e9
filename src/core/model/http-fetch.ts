import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';

const agents = { 'http:': new HttpAgent({ keepAlive: true }), 'https:': new HttpsAgent({ keepAlive: true }) };

/** Redirects the built-in fetch follows (a server behind a proxy that moved it): they are handed to it. */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Statuses whose response has no body (a Response given one would not construct). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);
/** What a status line's reason phrase may not hold (a Response refuses it). */
const NOT_REASON_PHRASE = /[^\t\x20-\x7e\x80-\xff]/g;

function headersOf(init: RequestInit | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  new Headers(init?.headers).forEach((value, name) => {
    headers[name] = value;
  });
  return headers;
}

function responseOf(message: IncomingMessage): Response {
  const headers = new Headers();
  for (let index = 0; index + 1 < message.rawHeaders.length; index += 2) headers.append(message.rawHeaders[index] as string, message.rawHeaders[index + 1] as string);
  const status = message.statusCode ?? 502;
  if (NULL_BODY.has(status)) message.resume();
  const body = NULL_BODY.has(status) ? null : (Readable.toWeb(message) as ReadableStream<Uint8Array>);
  return new Response(body, { status, statusText: (message.statusMessage ?? '').replace(NOT_REASON_PHRASE, ''), headers });
}

/** What this transport leaves to the built-in fetch: a body other than text, and a Node told to use the environment's proxy (NODE_USE_ENV_PROXY), which only the built-in fetch honours. */
function builtInFetchFor(init: RequestInit | undefined): boolean {
  return (init?.body !== undefined && init.body !== null && typeof init.body !== 'string') || Boolean(process.env.NODE_USE_ENV_PROXY);
}

/**
 * The model client's `fetch`, over node:http with kept-alive connections. A request and its streamed
 * answer cost a fraction of the main thread that the built-in fetch spends (which matters when dozens
 * of steps' answers arrive at once), and no transport timeout of its own cuts a slow model short: the
 * stall watchdog's first-byte and idle limits, the operator's settings, are the only ones. A redirect,
 * a body other than text (the SDK sends JSON text) and a proxied Node go through the built-in fetch.
 */
export function httpFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  if (input instanceof Request || builtInFetchFor(init)) return fetch(input, init);
  const url = new URL(input);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const request = send(url, { method: init?.method ?? 'GET', headers: headersOf(init), agent: agents[url.protocol === 'https:' ? 'https:' : 'http:'], signal: init?.signal ?? undefined }, (message) => {
      if (REDIRECTS.has(message.statusCode ?? 0) && message.headers.location) {
        message.resume();
        resolve(fetch(url, init));
        return;
      }
      // A status no Response can carry (600 and up) fails this request, not the process.
      try {
        resolve(responseOf(message));
      } catch (error) {
        message.destroy();
        reject(error as Error);
      }
    });
    request.on('error', reject);
    request.end(init?.body ?? undefined);
  });
}
