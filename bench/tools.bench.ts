import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { childProcessLauncher } from '../src/core/process/child-process-launcher';
import { ToolWorkerPool } from '../src/core/tools/tool-worker-pool';
import { line, ms, percentile } from './support';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ENTRY = join(ROOT, 'out', 'node', 'executor.js');

function pool(workspace: string): ToolWorkerPool {
  return new ToolWorkerPool({ launcher: childProcessLauncher, entry: ENTRY, workspace, networkTools: false, readableRoots: [ROOT] });
}

const call = (target: ToolWorkerPool, index: number) => target.call('calculator', { expression: `${index} * 2` }, { signal: new AbortController().signal, timeoutMs: 5000 });

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
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}
