import { createServer, type Server } from 'node:http';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { sleep } from '../../shared/abort';
import { ArchonError } from '../../shared/errors';
import { clusterSecret, RestateCluster } from '../../core/restate/restate-cluster';
import { workerEndpoint } from '../../core/restate/worker-endpoint';
import type { ArchonRuntime } from '../../core/runtime';
import { refuseWorkspaceInArchon } from '../../core/tools/hidden-folders';
import { toolWorkerPool, workspaceFolder } from '../../core/tools/tool-host';
import type { UndoWorkers } from '../../core/tools/file-restorer';
import { RESTATE_DEFAULTS } from './command-flags';
import { nodeWorkers } from './run-command';
import { workerRunDriver } from './worker-runs';

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

export interface RunningWorker {
  id: string;
  /** Where it listens. */
  address: string;
  /** Takes no new call, lets those under way finish (for at most 30 s), then ends what is left. */
  close(): Promise<void>;
}

/**
 * A worker: runs the built-in tool calls of a Restate cluster's runs, and the runs its schedules
 * fire, in this machine's sandboxed tool processes and workspace. Serves its endpoint and registers
 * it with the admin API.
 */
export async function startWorker(runtime: ArchonRuntime, flags: WorkerFlags, workers: UndoWorkers = nodeWorkers(runtime)): Promise<RunningWorker> {
  const workspace = workspaceFolder(resolve(flags.workspace ?? '.'));
  refuseWorkspaceInArchon(workspace, runtime.dataDir);
  if (!flags.clusterSecretFile) throw new ArchonError('CONFIG_INVALID', 'archon worker needs --cluster-secret-file: the file of the secret the desk signs each call with (see docs/scale-out.md).');
  if (ALL_ADDRESSES.has(flags.host) && !flags.advertise) throw new ArchonError('CONFIG_INVALID', `Listening on ${flags.host}, the worker cannot tell Restate where to reach it: pass --advertise with its address as the Restate server sees it, e.g. http://build.lan:${flags.port || 9080}.`);
  const secret = clusterSecret(flags.clusterSecretFile, workspace);
  const settings = runtime.store.settingsForRun();
  if (settings.sandbox === 'off') throw new ArchonError('CONFIG_INVALID', `The OS sandbox is off in the Settings of ${runtime.dataDir}: a worker runs calls no one at this machine sees, so it runs them only confined. Turn the sandbox on there, or give the worker a data dir of its own (--data-dir).`);
  const pool = toolWorkerPool({ ...workers, settings: { ...settings, allowNetwork: flags.allowNetwork ?? settings.allowNetwork }, log: runtime.log }, workspace);
  pool.warmUp();
  const cluster = new RestateCluster({ ingress: flags.restateIngress ?? RESTATE_DEFAULTS.ingress, admin: flags.restateAdmin ?? RESTATE_DEFAULTS.admin });
  const id = flags.id ?? `${hostname().slice(0, 48)}-${process.pid}`;
  const driver = workerRunDriver(runtime, { id, cluster, secret, workspace, workers, allowNetwork: flags.allowNetwork });
  const server = createServer(workerEndpoint({ id, caller: pool, cluster, secret }, { id, driver, secret, cluster }, runtime.log));
  const close = async () => {
    await drain(server);
    await pool.close();
  };
  try {
    const port = await listen(server, flags.port, flags.host);
    const address = `http://${flags.host.includes(':') ? `[${flags.host}]` : flags.host}:${port}`;
    await cluster.register(flags.advertise ?? address, AbortSignal.timeout(REGISTER_TIMEOUT_MS));
    return { id, address, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** `archon worker`: a worker until SIGINT or SIGTERM; prints `Archon worker <id> serving on <address>` once registered. */
export async function serveWorker(runtime: ArchonRuntime, flags: WorkerFlags): Promise<void> {
  const worker = await startWorker(runtime, flags);
  try {
    process.stdout.write(`Archon worker ${worker.id} serving on ${worker.address}\n`);
    await new Promise<void>((done) => {
      process.once('SIGINT', done);
      process.once('SIGTERM', done);
    });
  } finally {
    await worker.close();
  }
}
