import { createServer, type Server } from 'node:http';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { sleep } from '../../shared/abort';
import { ArchonError } from '../../shared/errors';
import { clusterSecret, RestateCluster } from '../../core/restate/restate-cluster';
import { toolWorkerHandler } from '../../core/restate/tool-service';
import type { ArchonRuntime } from '../../core/runtime';
import { refuseWorkspaceInArchon } from '../../core/tools/hidden-folders';
import { toolWorkerPool, workspaceFolder } from '../../core/tools/tool-host';
import { RESTATE_DEFAULTS } from './command-flags';
import { nodeWorkers } from './run-command';

export interface WorkerFlags {
  restateIngress?: string;
  restateAdmin?: string;
  port: number;
  host: string;
  /** The address Restate reaches the worker at, when not the one it listens on (a load balancer in front of several). */
  advertise?: string;
  workspace?: string;
  allowNetwork?: boolean;
  id?: string;
  clusterSecretFile?: string;
}

/** Addresses that mean every interface: no one can be reached at them. */
const ALL_ADDRESSES: ReadonlySet<string> = new Set(['0.0.0.0', '::']);

/** How long a stopping worker lets the calls it runs finish before it ends them (they come back uncertain then). */
const DRAIN_MS = 30_000;

/** How long registering with the admin API may take before the worker gives up. */
const REGISTER_TIMEOUT_MS = 60_000;

/** Takes no new call and lets those under way finish, for at most DRAIN_MS, then ends what is left. */
async function drain(server: Server): Promise<void> {
  const finished = new Promise<void>((done) => server.close(() => done()));
  server.closeIdleConnections();
  const waited = new AbortController();
  await Promise.race([finished, sleep(DRAIN_MS, waited.signal).catch(() => undefined)]);
  waited.abort();
  server.closeAllConnections();
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((done, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => done((server.address() as { port: number }).port));
  });
}

/**
 * `archon worker`: runs built-in tool calls for the runs of a Restate cluster, in this machine's
 * sandboxed tool processes and workspace, until SIGINT or SIGTERM, then lets the calls under way
 * finish. Serves its endpoint, registers it with the admin API, then prints `Archon worker <id>
 * serving on <address>`.
 */
export async function serveWorker(runtime: ArchonRuntime, flags: WorkerFlags): Promise<void> {
  const workspace = workspaceFolder(resolve(flags.workspace ?? '.'));
  refuseWorkspaceInArchon(workspace, runtime.dataDir);
  if (!flags.clusterSecretFile) throw new ArchonError('CONFIG_INVALID', 'archon worker needs --cluster-secret-file: the file of the secret the desk signs each call with (see docs/scale-out.md).');
  if (ALL_ADDRESSES.has(flags.host) && !flags.advertise) throw new ArchonError('CONFIG_INVALID', `Listening on ${flags.host}, the worker cannot tell Restate where to reach it: pass --advertise with its address as the Restate server sees it, e.g. http://build.lan:${flags.port || 9080}.`);
  const secret = clusterSecret(flags.clusterSecretFile, workspace);
  const settings = runtime.store.settingsForRun();
  if (settings.sandbox === 'off') throw new ArchonError('CONFIG_INVALID', `The OS sandbox is off in the Settings of ${runtime.dataDir}: a worker runs calls no one at this machine sees, so it runs them only confined. Turn the sandbox on there, or give the worker a data dir of its own (--data-dir).`);
  const pool = toolWorkerPool({ ...nodeWorkers(runtime), settings: { ...settings, allowNetwork: flags.allowNetwork ?? settings.allowNetwork }, log: runtime.log }, workspace);
  pool.warmUp();
  const cluster = new RestateCluster({ ingress: flags.restateIngress ?? RESTATE_DEFAULTS.ingress, admin: flags.restateAdmin ?? RESTATE_DEFAULTS.admin });
  const id = flags.id ?? `${hostname().slice(0, 48)}-${process.pid}`;
  const server = createServer(toolWorkerHandler({ id, caller: pool, cluster, secret }, runtime.log));
  try {
    const port = await listen(server, flags.port, flags.host);
    const address = `http://${flags.host.includes(':') ? `[${flags.host}]` : flags.host}:${port}`;
    await cluster.register(flags.advertise ?? address, AbortSignal.timeout(REGISTER_TIMEOUT_MS));
    process.stdout.write(`Archon worker ${id} serving on ${address}\n`);
    await new Promise<void>((done) => {
      process.once('SIGINT', done);
      process.once('SIGTERM', done);
    });
  } finally {
    await drain(server);
    await pool.close();
  }
}
