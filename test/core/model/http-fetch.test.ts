import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { httpFetch } from '../../../src/core/model/http-fetch';

let server: Server | undefined;
const rawServers: (() => void)[] = [];
afterEach(async () => {
  for (const close of rawServers.splice(0)) close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** A server that answers every connection with these bytes, as a server with its own ideas of HTTP would. */
async function rawServer(bytes: string): Promise<string> {
  const sockets = new Set<Socket>();
  const raw = createTcpServer((socket) => {
    sockets.add(socket);
    socket.end(bytes);
  });
  await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
  rawServers.push(() => {
    for (const socket of sockets) socket.destroy();
    raw.close();
  });
  return `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
}

async function serve(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function bodyOf(request: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    request.on('end', () => resolve(text));
  });
}

describe('httpFetch', () => {
  it('sends the method, headers and text body, and answers with the status, every header and the body', async () => {
    const seen: { method?: string; purpose?: string | string[]; body?: string }[] = [];
    const url = await serve(async (request, response) => {
      seen.push({ method: request.method, purpose: request.headers['x-archon-purpose'], body: await bodyOf(request) });
      response.writeHead(201, 'Made', [['content-type', 'application/json'], ['set-cookie', 'a=1'], ['set-cookie', 'b=2']]);
      response.end('{"ok":true}');
    });
    const response = await httpFetch(`${url}/v1/chat/completions`, { method: 'POST', headers: new Headers({ 'X-Archon-Purpose': 'step' }), body: '{"q":1}' });
    expect(seen).toEqual([{ method: 'POST', purpose: 'step', body: '{"q":1}' }]);
    expect(response.status).toBe(201);
    expect(response.statusText).toBe('Made');
    expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await response.json()).toEqual({ ok: true });
  });

  it('hands over a streamed answer chunk by chunk, before the server has finished it', async () => {
    let finish: (() => void) | undefined;
    const url = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: first\n\n');
      finish = () => response.end('data: last\n\n');
    });
    const response = await httpFetch(url);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('data: first\n\n');
    finish?.();
    const rest: string[] = [];
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest.push(new TextDecoder().decode(chunk.value));
    expect(rest.join('')).toBe('data: last\n\n');
  });

  it('keeps the connection alive: the next request comes over the same socket', async () => {
    const ports: number[] = [];
    const url = await serve((request, response) => {
      ports.push(request.socket.remotePort as number);
      response.end('ok');
    });
    for (let index = 0; index < 3; index++) expect(await (await httpFetch(url)).text()).toBe('ok');
    expect(new Set(ports).size).toBe(1);
  });

  it('a stop ends the answer under way: the reader fails and the server sees the connection close', async () => {
    let serverSawClose: () => void = () => undefined;
    const closed = new Promise<void>((resolve) => (serverSawClose = resolve));
    const url = await serve((request, response) => {
      response.writeHead(200);
      response.write('partial');
      request.socket.on('close', () => serverSawClose());
    });
    const stop = new AbortController();
    const response = await httpFetch(url, { signal: stop.signal });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('partial');
    stop.abort();
    await expect(reader.read()).rejects.toThrow();
    await closed;
  });

  it('a stop before the answer rejects the request with the abort', async () => {
    const url = await serve(() => undefined);
    const stop = new AbortController();
    const pending = httpFetch(url, { signal: stop.signal });
    stop.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('a server that is not there rejects with its connection error', async () => {
    const url = await serve(() => undefined);
    server?.close();
    await expect(httpFetch(url)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('a status without a body gives a null body; a body other than text goes through the built-in fetch', async () => {
    const bodies: string[] = [];
    const url = await serve(async (request, response) => {
      bodies.push(await bodyOf(request));
      response.writeHead(request.method === 'DELETE' ? 204 : 200);
      response.end();
    });
    const empty = await httpFetch(url, { method: 'DELETE' });
    expect([empty.status, empty.body]).toEqual([204, null]);
    await httpFetch(url, { method: 'POST', body: new TextEncoder().encode('bytes') });
    expect(bodies).toEqual(['', 'bytes']);
  });

  it('a status line no Response can carry fails the request instead of throwing out of the socket', async () => {
    await expect(httpFetch(await rawServer('HTTP/1.1 600 Odd\r\ncontent-length: 0\r\n\r\n'))).rejects.toThrow(/600|range/);
  });

  it('keeps a reason phrase a Response accepts, dropping what it would refuse', async () => {
    const response = await httpFetch(await rawServer('HTTP/1.1 418 I\x7fm a teapot\r\ncontent-length: 2\r\n\r\nok'));
    expect([response.status, response.statusText, await response.text()]).toEqual([418, 'Im a teapot', 'ok']);
  });

  it('follows a redirect as the built-in fetch does, the body and method kept across a 307', async () => {
    const seen: string[] = [];
    const url = await serve(async (request, response) => {
      seen.push(`${request.method} ${request.url} ${await bodyOf(request)}`);
      if (request.url === '/old') response.writeHead(307, { location: '/new' }).end();
      else response.end('moved here');
    });
    const response = await httpFetch(`${url}/old`, { method: 'POST', body: '{"q":1}' });
    expect([response.status, await response.text()]).toEqual([200, 'moved here']);
    // The built-in fetch asks the moved address once more itself (a redirect answers nothing), then follows it.
    expect(seen).toEqual(['POST /old {"q":1}', 'POST /old {"q":1}', 'POST /new {"q":1}']);
  });

  it("leaves a Node told to use the environment's proxy (NODE_USE_ENV_PROXY) to the built-in fetch, which honours it", async () => {
    const fetchModes: (string | string[] | undefined)[] = [];
    const url = await serve((request, response) => {
      fetchModes.push(request.headers['sec-fetch-mode']);
      response.end('ok');
    });
    await httpFetch(url);
    process.env.NODE_USE_ENV_PROXY = '1';
    try {
      await httpFetch(url);
    } finally {
      delete process.env.NODE_USE_ENV_PROXY;
    }
    // The built-in fetch marks its requests; node:http does not.
    expect(fetchModes).toEqual([undefined, 'cors']);
  });
});
