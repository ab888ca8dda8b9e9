import { afterEach, describe, expect, it } from 'vitest';
import { Embedder } from '../../../src/core/model/embedder';
import type { ServerRequest } from '../../../src/core/model/server-request';
import { startModelServer, type ScriptedModelServer } from '../../kit/scripted-model-server';

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const signal = () => new AbortController().signal;

describe('the embedder tells the run of each request the server received', () => {
  it('one request, sent with X-Archon-Purpose: embedding, told once with the tokens the server reported', async () => {
    server = await startModelServer({ reply: [] });
    const told: ServerRequest[] = [];
    const embedder = new Embedder({ baseUrl: server.url, model: 'embed-small' }).recordingTo((request) => void told.push(request));
    expect(await embedder.embed(['one', 'two', 'three'], signal())).toHaveLength(3);
    expect(server.requests.map((request) => [request.path, request.purpose])).toEqual([['/v1/embeddings', 'embedding']]);
    expect(told).toEqual([expect.objectContaining({ purpose: 'embedding', request: 'POST /v1/embeddings: HTTP 200', ok: true, error: null, usage: { promptTokens: 3, completionTokens: 0, estimated: false } })]);
  });

  it('a server without the model: the request told as failed, and no view of the embedder asks again', async () => {
    server = await startModelServer({ reply: [], embeddings: 'unavailable' });
    const shared = new Embedder({ baseUrl: server.url, model: 'missing-embed' });
    const first: ServerRequest[] = [];
    const second: ServerRequest[] = [];
    expect(await shared.recordingTo((request) => void first.push(request)).embed(['query'], signal())).toBeNull();
    expect(first).toEqual([expect.objectContaining({ purpose: 'embedding', ok: false, error: expect.stringContaining('HTTP 404') })]);
    const other = shared.recordingTo((request) => void second.push(request));
    expect(await other.embed(['query'], signal())).toBeNull();
    expect(other.failure).toContain('not found');
    expect(second).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it('resolves only once the request is recorded', async () => {
    server = await startModelServer({ reply: [] });
    const order: string[] = [];
    const embedder = new Embedder({ baseUrl: server.url, model: 'embed-small' }).recordingTo(async () => {
      await new Promise((resolve) => setImmediate(resolve));
      order.push('recorded');
    });
    await embedder.embed(['one'], signal());
    order.push('returned');
    expect(order).toEqual(['recorded', 'returned']);
  });
});
