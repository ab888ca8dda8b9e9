import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RestateCluster } from '../../../src/core/restate/restate-cluster';
import { ArchonError } from '../../../src/shared/errors';
import { inAppTerms } from '../../../src/shared/app-advice';

const servers: Server[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(servers.splice(0).map((server) => new Promise((done) => server.close(done))));
});

/** A server that takes connections and never answers: a Restate server hung, or something else on its port. */
async function silentServer(): Promise<string> {
  const server = createServer((socket) => sockets.push(socket));
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

async function failureOf(task: Promise<unknown>): Promise<ArchonError> {
  const error = await task.then(() => null, (failure: unknown) => failure);
  if (!ArchonError.isInstance(error)) throw new Error(`expected an ArchonError, got ${String(error)}`);
  return error;
}

describe('a Restate cluster asked for what the page shows', () => {
  it('says within its deadline that a server which takes the connection and never answers cannot be reached, in the app\'s terms', async () => {
    const address = await silentServer();
    const cluster = new RestateCluster({ ingress: address, admin: address }, 500);
    const failure = await failureOf(cluster.query('SELECT 1', z.unknown(), new AbortController().signal));
    expect(failure.code).toBe('CLUSTER_UNREACHABLE');
    expect(inAppTerms(failure.message)).toBe(`No Restate server answers at ${address}/query. Start one (npx restate-server), or set the address of yours in Settings → Engine.`);
  });

  it('ends the wait when the caller\'s signal does, with the caller\'s reason', async () => {
    const address = await silentServer();
    const cluster = new RestateCluster({ ingress: address, admin: address }, 60_000);
    const caller = new AbortController();
    const asked = cluster.query('SELECT 1', z.unknown(), caller.signal).catch((error: unknown) => error);
    caller.abort(new Error('the page went away'));
    expect(await asked).toEqual(new Error('the page went away'));
  });
});

describe('what the cluster says of an answer, in the app\'s terms', () => {
  it('names the Settings field for the secret, and no command', () => {
    expect(inAppTerms('Refused: an answer not signed with this cluster\'s secret. Check that --cluster-secret-file is the file the workers were started with.')).toBe("Refused: an answer not signed with this cluster's secret. Check that the cluster secret file in Settings → Engine is the file the workers were started with.");
    expect(inAppTerms('Approval 5f0c was answered already. archon approvals lists those that wait.')).toBe('Approval 5f0c was answered already.');
  });
});
