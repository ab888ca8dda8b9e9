import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** How the server answers one request: whole, cut (the socket closed after `cutAfter` body bytes), stalled after `stallAfter` bytes, or ignoring Range. */
export interface Answer {
  cutAfter?: number;
  stallAfter?: number;
  ignoreRange?: boolean;
}

export interface ServedRequest {
  path: string;
  range: string | undefined;
  status: number;
}

export interface ModelFileServer {
  /** The file's URL. */
  url: string;
  file: Buffer;
  sha256: string;
  requests: ServedRequest[];
  /** Answers for the next requests, in order; after them, every request is answered whole. */
  answers: Answer[];
  /** Body bytes written so far, across requests. */
  sentBytes(): number;
  close(): Promise<void>;
}

/** A GGUF-looking file of `size` bytes: the magic, then bytes that differ along the file (so a misplaced resume shows). */
export function ggufBytes(size: number): Buffer {
  const bytes = Buffer.alloc(size);
  for (let index = 0; index < size; index++) bytes[index] = (index * 31 + (index >> 8) * 7 + (index >> 16)) & 0xff;
  bytes.write('GGUF', 0, 'ascii');
  return bytes;
}

export function sha256Of(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** `bytes=N-`, as the downloader asks. */
function rangeStart(request: IncomingMessage): number | null {
  const match = /^bytes=(\d+)-$/.exec(request.headers.range ?? '');
  return match ? Number(match[1]) : null;
}

function answer(file: Buffer, request: IncomingMessage, response: ServerResponse, plan: Answer, count: (bytes: number) => void): number {
  if (request.url !== '/model.gguf') {
    response.writeHead(404).end('not found');
    return 404;
  }
  const start = plan.ignoreRange ? null : rangeStart(request);
  if (start !== null && start >= file.length) {
    response.writeHead(416, { 'content-range': `bytes */${file.length}` }).end();
    return 416;
  }
  const body = file.subarray(start ?? 0);
  const status = start === null ? 200 : 206;
  response.writeHead(status, { 'content-length': String(body.length), 'accept-ranges': 'bytes', ...(start === null ? {} : { 'content-range': `bytes ${start}-${file.length - 1}/${file.length}` }) });
  const limit = plan.cutAfter ?? plan.stallAfter;
  if (limit === undefined) {
    count(body.length);
    response.end(body);
    return status;
  }
  count(Math.min(limit, body.length));
  response.write(body.subarray(0, limit), () => {
    if (plan.cutAfter !== undefined) response.socket?.destroy();
  });
  return status;
}

/** A loopback HTTP server serving one file at /model.gguf, with Range support, recording each request. */
export async function startModelFileServer(file: Buffer): Promise<ModelFileServer> {
  const requests: ServedRequest[] = [];
  const answers: Answer[] = [];
  const sockets = new Set<Socket>();
  let sent = 0;
  const server = createServer((request, response) => {
    const status = answer(file, request, response, answers.shift() ?? {}, (bytes) => (sent += bytes));
    requests.push({ path: request.url ?? '', range: request.headers.range, status });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/model.gguf`,
    file,
    sha256: sha256Of(file),
    requests,
    answers,
    sentBytes: () => sent,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
