import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clusterSecretFile, freePorts, startBalancer, startRestateServer, startWorker } from '../test/kit/restate-cluster';
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

/** The same fan-out with its tool calls on this machine and on a Restate cluster of two workers behind a balancer. */
export async function scaleOutBenchmarks(): Promise<void> {
  process.stdout.write('\n## Scale-out: tool calls on Restate workers\n');
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
  } finally {
    for (const worker of workers) await worker.close();
    await front.close();
    await cluster.close();
    secret.remove();
    for (const dir of [workspace, ...dataDirs]) rmSync(dir, { recursive: true, force: true });
  }
}
