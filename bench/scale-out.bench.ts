import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pino from 'pino';
import { latchClusterStop, resetClusterStop } from '../src/core/restate/cluster-stop';
import { clusterSecret, RestateCluster } from '../src/core/restate/restate-cluster';
import { holdRun, readHeldRun, readRunLog } from '../src/core/restate/run-log';
import { replicateRun } from '../src/core/restate/run-replica';
import { ArchonStore } from '../src/core/store/archon-store';
import { dispatchRun } from '../src/core/restate/run-service';
import { clusterSecretFile, freePorts, startBalancer, startRestateServer, startWorker } from '../test/kit/restate-cluster';
import { planReply, startModelServer } from '../test/kit/scripted-model-server';
import { processesMatching } from '../test/support/processes';
import { line, ms, percentile } from './support';
import { fanOutRun } from './tools.bench';

const WIDTH = 32;
const TRIALS = 3;

async function spans(workspace: string, cluster?: { ingress: string; admin: string; secretFile: string }): Promise<{ ratio: number; wait: number; failed: number }> {
  const runs = [];
  for (let trial = 0; trial < TRIALS; trial++) runs.push(await fanOutRun(WIDTH, workspace, cluster));
  return { ratio: percentile(runs.map((run) => run.ratio), 50), wait: percentile(runs.flatMap((run) => run.waits), 50), failed: runs.filter((run) => !run.completed).length };
}

function report(engine: string, figures: { ratio: number; wait: number; failed: number }): void {
  line(`fan-out span / critical path, width ${WIDTH}, ${engine} (median of ${TRIALS})`, figures.ratio.toFixed(3));
  line(`  first tool call wait per leaf, ${engine} (p50)`, ms(figures.wait));
  if (figures.failed > 0) line(`  runs that did not complete, ${engine}`, `${figures.failed} of ${TRIALS}`);
}

/** How long until `test` holds, polled every 20 ms for at most 60 s; Infinity if it never does. */
async function timeUntil(test: () => boolean): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < 60_000) {
    if (test()) return performance.now() - started;
    await new Promise((done) => setTimeout(done, 20));
  }
  return Number.POSITIVE_INFINITY;
}

function runStatuses(dataDirs: readonly string[]): string[] {
  return dataDirs.flatMap((dataDir) => {
    if (!existsSync(join(dataDir, 'archon.db'))) return [];
    const db = new Database(join(dataDir, 'archon.db'), { readonly: true });
    try {
      return (db.prepare('SELECT status FROM runs').all() as { status: string }[]).map((row) => row.status);
    } finally {
      db.close();
    }
  });
}

/**
 * The cluster's emergency stop: a run a worker drives (sent with --detach) waits in a command; from
 * latching the stop to the run ended stopped, and to its command gone.
 */
async function clusterStop(cluster: { ingress: string; admin: string }, secretFile: string, workspace: string, dataDirs: readonly string[]): Promise<void> {
  const marker = `archon-bench-stop-${randomUUID()}`;
  const command = `sleep 300 # ${marker}`;
  const server = await startModelServer({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'wait', description: 'wait' }]) : { toolCalls: [{ name: 'run_command', arguments: { command } }] }) });
  const restate = new RestateCluster(cluster);
  const secret = clusterSecret(secretFile, workspace);
  try {
    await dispatchRun(restate, secret, { goal: 'wait', approve: 'auto', options: { modelUrl: server.url, workspace } }, AbortSignal.timeout(60_000));
    await timeUntil(() => processesMatching(marker).length > 0);
    const stopping = latchClusterStop(restate, secret, { latched: true, since: new Date().toISOString(), triggeredBy: 'cli', reason: 'bench' }, AbortSignal.timeout(60_000));
    const [stopped, gone] = await Promise.all([timeUntil(() => runStatuses(dataDirs).includes('stopped')), timeUntil(() => processesMatching(marker).length === 0), stopping]);
    line('cluster emergency stop: a worker-driven run ended stopped', ms(stopped), '< 1 s');
    line('cluster emergency stop: its command gone', ms(gone), '< 1 s');
  } finally {
    await resetClusterStop(restate, secret, AbortSignal.timeout(60_000));
    await server.close();
  }
}

/**
 * Following a run from another desk: a run a worker drives (sent with --detach); how long after its
 * worker wrote each event the cluster's log has it, read every 50 ms (`archon follow` reads every second).
 */
async function followLag(cluster: { ingress: string; admin: string }, secretFile: string, workspace: string): Promise<string> {
  const server = await startModelServer({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'note', description: 'note' }]) : { content: 'noted' }) });
  const restate = new RestateCluster(cluster);
  try {
    const runId = await dispatchRun(restate, clusterSecret(secretFile, workspace), { goal: 'note', approve: 'auto', options: { modelUrl: server.url, workspace } }, AbortSignal.timeout(60_000));
    const lags: number[] = [];
    let seq = 0;
    const started = performance.now();
    while (performance.now() - started < 60_000) {
      const events = await readRunLog(restate, runId, seq, AbortSignal.timeout(10_000));
      const now = Date.now();
      lags.push(...events.map((event) => now - Date.parse(event.ts)));
      seq = events.at(-1)?.seq ?? seq;
      if (events.some((event) => event.type === 'run.completed' || event.type === 'run.failed')) break;
      await new Promise((done) => setTimeout(done, 50));
    }
    line(`archon follow: an event in the cluster's log after its worker wrote it, p50 (${lags.length} events)`, ms(percentile(lags, 50)));
    line('  the same, p95', ms(percentile(lags, 95)));
    return runId;
  } finally {
    await server.close();
  }
}

const HAND_OVERS = 40;

/**
 * A run a worker drove, as the cluster holds it: what each of its calls waits for before it leaves
 * (the run's changes held by the cluster: here one row each time), and what another worker, on a
 * data dir of its own, takes to take it up (read, checked and taken in).
 */
async function handOver(cluster: { ingress: string; admin: string }, secretFile: string, workspace: string, dataDirs: readonly string[], runId: string): Promise<void> {
  const dataDir = dataDirs.find((dir) => existsSync(join(dir, 'archon.db')) && runIdsIn(dir).includes(runId)) as string;
  const store = ArchonStore.open(dataDir);
  const [rows, events] = [store.runs.rows.read(runId), store.runs.events(runId)];
  store.close();
  const restate = new RestateCluster(cluster);
  const secret = clusterSecret(secretFile, workspace);
  const holder = { dataDir: 'bench', worker: 'bench', attempt: randomUUID() };
  await holdRun(restate, secret, runId, holder, AbortSignal.timeout(60_000));
  const changing = [...rows];
  const source = { events: (after: number) => events.filter((event) => event.seq > after), rows: () => changing };
  const replica = replicateRun(restate, secret, runId, holder, source, { sentThrough: events.at(-1)?.seq ?? 0, digests: new Map() }, pino({ level: 'silent' }), { taken: () => undefined, stopAsked: () => undefined });
  const waits: number[] = [];
  try {
    await replica.sync(AbortSignal.timeout(60_000));
    for (let call = 0; call < HAND_OVERS; call++) {
      changing.push({ table: 'run_facts', key: `run_facts/${runId}/bench-${call}`, place: 0, values: { run_id: runId, key: `bench-${call}`, value: String(call), updated_at: new Date().toISOString() } });
      const started = performance.now();
      await replica.sync(AbortSignal.timeout(60_000));
      waits.push(performance.now() - started);
    }
  } finally {
    await replica.close();
  }
  line(`a worker-driven run's call waits for the cluster to hold its changes, p50 (${rows.length} rows, ${HAND_OVERS} calls)`, ms(percentile(waits, 50)));
  line('  the same, p95', ms(percentile(waits, 95)));
  const other = mkdtempSync(join(tmpdir(), 'archon-bench-take-up-'));
  try {
    const started = performance.now();
    const taken = await holdRun(restate, secret, runId, { ...holder, attempt: randomUUID() }, AbortSignal.timeout(60_000));
    const held = await readHeldRun(restate, secret, runId, taken, AbortSignal.timeout(60_000));
    const otherStore = ArchonStore.open(other);
    otherStore.runs.rows.adopt(runId, held.rows, held.events);
    otherStore.close();
    line(`another worker takes the run up from the cluster (${held.rows.length} rows, ${held.events.length} events)`, ms(performance.now() - started));
  } finally {
    rmSync(other, { recursive: true, force: true });
  }
}

function runIdsIn(dataDir: string): string[] {
  const db = new Database(join(dataDir, 'archon.db'), { readonly: true });
  try {
    return (db.prepare('SELECT id FROM runs').all() as { id: string }[]).map((row) => row.id);
  } finally {
    db.close();
  }
}

/** The same fan-out with its tool calls on this machine and on a Restate cluster of two workers behind a balancer. */
export async function scaleOutBenchmarks(): Promise<void> {
  process.stdout.write('\n## Scale-out: tool calls and runs on Restate workers\n');
  const workspace = mkdtempSync(join(tmpdir(), 'archon-bench-scale-out-'));
  const dataDirs = [mkdtempSync(join(tmpdir(), 'archon-bench-worker-')), mkdtempSync(join(tmpdir(), 'archon-bench-worker-'))];
  const started = performance.now();
  const cluster = await startRestateServer();
  line('Restate server ready', ms(performance.now() - started));
  const [frontPort, ...ports] = (await freePorts(3)) as [number, number, number];
  const front = await startBalancer(frontPort, () => ports);
  const secret = clusterSecretFile();
  const workers = [];
  try {
    for (const [index, port] of ports.entries()) workers.push(await startWorker(cluster, { id: `w${index + 1}`, port, workspace, dataDir: dataDirs[index] as string, secretFile: secret.file, advertise: front.url }));
    report('local', await spans(workspace));
    report('restate, 2 workers', await spans(workspace, { ingress: cluster.ingress, admin: cluster.admin, secretFile: secret.file }));
    await handOver(cluster, secret.file, workspace, dataDirs, await followLag(cluster, secret.file, workspace));
    await clusterStop(cluster, secret.file, workspace, dataDirs);
  } finally {
    for (const worker of workers) await worker.close();
    await front.close();
    await cluster.close();
    secret.remove();
    for (const dir of [workspace, ...dataDirs]) rmSync(dir, { recursive: true, force: true });
  }
}
