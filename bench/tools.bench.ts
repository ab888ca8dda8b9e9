import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { launchRun } from '../src/core/agent/run-launcher';
import { approveAll } from '../src/core/approval/approval-channel';
import { modelConnector } from '../src/core/model/connect';
import { runCapabilities } from '../src/core/capabilities';
import { childProcessLauncher } from '../src/core/process/child-process-launcher';
import { EmergencyStop } from '../src/core/stop/emergency-stop';
import { ToolHost } from '../src/core/tools/tool-host';
import { ToolWorkerPool } from '../src/core/tools/tool-worker-pool';
import { RunOptionsSchema, type RunOptions } from '../src/shared/schemas/run';
import type { FanOutRequest } from './fan-out-server';
import { line, ms, percentile, withRuntime } from './support';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ENTRY = join(ROOT, 'out', 'node', 'executor.js');

function pool(workspace: string): ToolWorkerPool {
  return new ToolWorkerPool({ launcher: childProcessLauncher, entry: ENTRY, workspace, networkTools: false, readableRoots: [ROOT] });
}

const call = (target: ToolWorkerPool, index: number) => target.call('calculator', { expression: `${index} * 2` }, { signal: new AbortController().signal, timeoutMs: 5000 });

const FAN_OUT_SERVER = join(ROOT, 'bench', 'fan-out-server.ts');
const LATENCY_MS = 250;

/** The next message from `child`, or an error if it exits first. */
function nextMessage<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    const exited = (code: number | null) => reject(new Error(`The fan-out model server exited (code ${code}) before it answered.`));
    child.once('exit', exited);
    child.once('message', (message) => {
      child.off('exit', exited);
      resolve(message as T);
    });
  });
}

/** One leaf's first tool call, as the model saw it: from its tool-call request to the next, less the model's own latency. */
function toolWaits(requests: readonly FanOutRequest[]): number[] {
  const byStep = Map.groupBy(requests.filter((request) => request.stepId?.startsWith('leaf')), (request) => request.stepId as string);
  return [...byStep.values()].map((turns) => (turns[1]?.at ?? NaN) - (turns[0]?.at ?? NaN) - LATENCY_MS);
}

/**
 * `width` leaves, each one tool call (calculator) between two model turns, then a join: the critical
 * path is three model turns. The model server runs in its own process (fan-out-server.ts), as a real
 * one does. A fresh tool host per run, so the pool is cold when the run starts (it warms while the
 * plan awaits approval). Returns the model span over the critical path and the leaves' tool waits.
 * With `cluster`, the calls run on that Restate cluster's workers.
 */
export async function fanOutRun(width: number, workspace: string, cluster?: RunOptions['cluster']): Promise<{ ratio: number; waits: number[]; completed: boolean }> {
  const server = fork(FAN_OUT_SERVER, [String(width), String(LATENCY_MS)], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    const { url } = await nextMessage<{ url: string }>(server);
    const completed = await withRuntime(async (runtime) => {
      const settings = runtime.store.getSettings();
      const tools = new ToolHost({ launcher: childProcessLauncher, entry: ENTRY, readableRoots: [ROOT], hiddenFolders: [], settings, log: runtime.log });
      const options = RunOptionsSchema.parse({ modelUrl: url, model: '', policy: 'balanced', concurrency: width, maxTokens: null, maxCostUsd: null, workspace, maxIterations: 10, cluster });
      const estop = new EmergencyStop(runtime.store, runtime.bus, runtime.now);
      const result = await launchRun({ runtime, settings, approvals: approveAll, estop, tools, connect: modelConnector({}), capabilities: runCapabilities }, { goal: 'fan out', options }, new AbortController().signal);
      return result.status === 'completed';
    });
    server.send('done');
    const requests = await nextMessage<FanOutRequest[]>(server);
    const span = Math.max(...requests.map((request) => request.at)) + LATENCY_MS - Math.min(...requests.map((request) => request.at));
    return { ratio: span / (3 * LATENCY_MS), waits: toolWaits(requests), completed };
  } finally {
    server.kill();
  }
}

/** Issue #19: process isolation should add nothing visible to a fan-out, the pool cold at the start of each run. */
async function fanOutSpan(workspace: string): Promise<void> {
  const targets: Record<number, string | undefined> = { 8: '≤ 1.15', 32: '≤ 1.3' };
  for (const width of [1, 8, 32]) {
    const runs = [];
    for (let trial = 0; trial < 3; trial++) runs.push(await fanOutRun(width, workspace));
    line(`fan-out span / critical path, width ${width} (median of 3)`, percentile(runs.map((run) => run.ratio), 50).toFixed(3), targets[width]);
    line(`  first tool call wait per leaf, width ${width} (p50)`, ms(percentile(runs.flatMap((run) => run.waits), 50)));
    // Under heavy load a 2 s calculator timeout can fail a leaf: the figure is then not the fan-out's.
    const failed = runs.filter((run) => !run.completed).length;
    if (failed > 0) line(`  runs that did not complete, width ${width}`, `${failed} of ${runs.length}`);
  }
}

export async function toolBenchmarks(): Promise<void> {
  process.stdout.write('\n## Tool processes (issue #4)\n');
  const workspace = mkdtempSync(join(tmpdir(), 'archon-bench-tools-'));
  try {
    const coldStarts: number[] = [];
    for (let trial = 0; trial < 10; trial++) {
      const fresh = pool(workspace);
      const started = performance.now();
      await call(fresh, trial);
      coldStarts.push(performance.now() - started);
      await fresh.close();
    }
    line('cold worker start + first call (p50)', ms(percentile(coldStarts, 50)), '≤ 120 ms');
    line('cold worker start + first call (p95)', ms(percentile(coldStarts, 95)));

    const warm = pool(workspace);
    warm.warmUp();
    for (let index = 0; index < 50; index++) await call(warm, index);
    const dispatch: number[] = [];
    for (let index = 0; index < 500; index++) {
      const started = performance.now();
      await call(warm, index);
      dispatch.push(performance.now() - started);
    }
    line('warm-pool dispatch latency (p50)', ms(percentile(dispatch, 50)));
    line('warm-pool dispatch latency (p95)', ms(percentile(dispatch, 95)), '≤ 5 ms');
    await warm.close();
    await fanOutSpan(workspace);
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}
