import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { CONTENT_SECURITY_POLICY_HEADER } from '../../shared/csp';
import { ArchonError, toErrorEnvelope } from '../../shared/errors';
import { parseJsonOrUndefined } from '../../shared/json';
import { dispatchCommand, type CommandHandlers } from '../../shared/ipc/dispatch';
import { ClientFrameSchema, TOKEN_PARAM, TOKEN_PROTOCOL_PREFIX, WS_PATH, WS_PROTOCOL, type ServerFrame } from '../../shared/ipc/ws-protocol';
import { anySignal } from '../../shared/abort';
import type { EventBus } from '../../core/events/event-bus';
import { readStaticFile } from './static-files';

export interface HeadlessHostOptions {
  handlers: CommandHandlers;
  /** The emergency stop: every command's signal fires on it (read at each command, as re-arming replaces it). */
  stop: { readonly signal: AbortSignal };
  bus: EventBus;
  rendererDir: string;
  port: number;
}

export interface HeadlessHost {
  readonly url: string;
  readonly port: number;
  readonly token: string;
  close(): Promise<void>;
}

const MAX_FRAME_BYTES = 1024 * 1024;

function sameToken(candidate: string | undefined, token: string): boolean {
  if (!candidate) return false;
  const a = Buffer.from(candidate);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The token as the page sends it (a WebSocket subprotocol) or a program does (a bearer header, or the
 * `token` query of the WebSocket's own URL). Never a cookie: cookies are not kept apart by port, so
 * any other server on 127.0.0.1 would receive it.
 */
function presentedToken(request: IncomingMessage): string | undefined {
  const offered = (request.headers['sec-websocket-protocol'] ?? '').split(',').map((protocol) => protocol.trim());
  const fromProtocol = offered.find((protocol) => protocol.startsWith(TOKEN_PROTOCOL_PREFIX))?.slice(TOKEN_PROTOCOL_PREFIX.length);
  const fromQuery = new URL(request.url ?? '/', 'http://127.0.0.1').searchParams.get(TOKEN_PARAM) ?? undefined;
  return fromProtocol ?? /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1] ?? fromQuery;
}

function send(response: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers });
  response.end(body);
}

/**
 * `archon serve`: the runtime over HTTP and a WebSocket on 127.0.0.1 only. The page's files are not
 * secret and need no token; the WebSocket, which carries every command, needs the token printed at
 * start. Every request must name this host (no DNS rebinding).
 */
export async function startHeadlessHost(options: HeadlessHostOptions): Promise<HeadlessHost> {
  const token = randomBytes(24).toString('base64url');
  const sockets = new Set<WebSocket>();
  let origins: Set<string> = new Set();

  const namesThisHost = (request: IncomingMessage) => origins.has(`http://${request.headers.host ?? ''}`);

  const server = createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? '/', 'http://127.0.0.1');
      if (!namesThisHost(request)) {
        send(response, 403, 'Forbidden: open the address that `archon serve` printed (127.0.0.1 or localhost).\n');
        return;
      }
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        send(response, 405, 'Only GET is served here; commands go over the WebSocket.\n');
        return;
      }
      const file = await readStaticFile(options.rendererDir, url.pathname);
      if (!file) {
        send(response, 503, 'The Archon UI is not built. Run `npm run build`, then start `archon serve` again.\n');
        return;
      }
      response.writeHead(200, {
        'content-type': file.contentType,
        'content-security-policy': CONTENT_SECURITY_POLICY_HEADER,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'cache-control': file.isHtml ? 'no-store' : 'private, max-age=3600',
      });
      response.end(request.method === 'HEAD' ? undefined : file.body);
    })().catch((error: unknown) => send(response, 500, `${toErrorEnvelope(error).message}\n`));
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES, handleProtocols: (offered) => (offered.has(WS_PROTOCOL) ? WS_PROTOCOL : false) });
  server.on('upgrade', (request, socket, head) => {
    socket.on('error', () => socket.destroy());
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const origin = request.headers.origin;
    const originOk = origin === undefined || origins.has(origin);
    const authorized = namesThisHost(request) && sameToken(presentedToken(request), token);
    if (url.pathname !== WS_PATH || !originOk || !authorized) {
      socket.end(`HTTP/1.1 ${originOk ? 401 : 403} ${originOk ? 'Unauthorized' : 'Forbidden'}\r\nconnection: close\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => serveSocket(ws));
  });

  function serveSocket(ws: WebSocket): void {
    sockets.add(ws);
    const closed = new AbortController();
    const frame = (message: ServerFrame) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
    };
    const unsubscribe = options.bus.subscribe((event) => frame({ event }));
    // A bad client (a frame over the limit, a broken connection) costs its own socket, never the host.
    ws.on('error', () => ws.terminate());
    ws.on('close', () => {
      sockets.delete(ws);
      unsubscribe();
      closed.abort(new ArchonError('CANCELLED', 'The client disconnected.'));
    });
    ws.on('message', (data) => {
      void (async () => {
        const parsed = ClientFrameSchema.safeParse(parseJsonOrUndefined(String(data)));
        if (!parsed.success) {
          const error = new ArchonError('VALIDATION_FAILED', 'Malformed frame: send {"id": number, "command": string, "input": object}.');
          frame({ id: null, result: { ok: false, error: toErrorEnvelope(error) } });
          return;
        }
        const { id, command, input } = parsed.data;
        const signal = anySignal(options.stop.signal, closed.signal);
        frame({ id, result: await dispatchCommand(options.handlers, command, input, { signal }) });
      })();
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  origins = new Set([`http://127.0.0.1:${port}`, `http://localhost:${port}`]);

  return {
    url: `http://127.0.0.1:${port}/?${TOKEN_PARAM}=${token}`,
    port,
    token,
    async close() {
      for (const ws of sockets) ws.terminate();
      wss.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

