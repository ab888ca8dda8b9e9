import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { findLlamaServer, startLlamaServer, type LlamaServerOptions } from '../kit/llama-server';

export const LLAMA_SERVER = findLlamaServer();

/**
 * Why the real-engine tests cannot run here, or null. Outside CI a machine without the build skips
 * them with this reason; in CI, where `.ci/run` builds it, a missing build fails them.
 */
export function llamaServerMissing(): string | null {
  if (LLAMA_SERVER) return null;
  const reason = 'llama-server is not built: run `node scripts/build-llama-server.mjs` (minutes to half an hour, once)';
  if (process.env.CI) throw new Error(`${reason}; .ci/run builds it before the tests`);
  return reason;
}

/** One request as it passed the observer: what Archon asked and what llama-server answered. */
export interface ObservedRequest {
  method: string;
  path: string;
  status: number;
  purpose: string | null;
  body: string;
}

export interface RunningLlamaServer {
  /** Archon's `--model-url`: through the observer, so every answer's status is seen. */
  baseUrl: string;
  requests: ObservedRequest[];
  output: () => string;
}

/** A pass-through proxy that records each request's status; streamed answers pass as they come. */
async function observer(target: string, requests: ObservedRequest[]): Promise<Server> {
  const { hostname, port } = new URL(target);
  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks);
      const forward = httpRequest({ host: hostname, port, method: incoming.method, path: incoming.url, headers: incoming.headers }, (answer) => {
        const purpose = incoming.headers['x-archon-purpose'];
        requests.push({ method: incoming.method ?? '', path: incoming.url ?? '', status: answer.statusCode ?? 0, purpose: typeof purpose === 'string' ? purpose : null, body: body.toString('utf8') });
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      });
      forward.on('error', () => outgoing.destroy());
      outgoing.on('close', () => forward.destroy());
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** Starts llama-server behind an observer for one test; both stopped after it. */
export function useLlamaServer(): (options: LlamaServerOptions) => Promise<RunningLlamaServer> {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
  });
  return async (options) => {
    if (!LLAMA_SERVER) throw new Error(llamaServerMissing() ?? 'llama-server is not built');
    const server = await startLlamaServer(LLAMA_SERVER, options);
    const requests: ObservedRequest[] = [];
    const proxy = await observer(server.url, requests);
    cleanups.push(async () => {
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      await server.close();
    });
    const { port } = proxy.address() as AddressInfo;
    return { baseUrl: `http://127.0.0.1:${port}/v1`, requests, output: server.output };
  };
}
