import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { line, ms, percentile } from './support';

const CLI = fileURLToPath(new URL('../out/node/cli.js', import.meta.url));
const RUNS = 10;

/** p50 of the wall time of the built CLI from start to exit, over RUNS runs. */
function p50(args: string[]): number {
  const times = Array.from({ length: RUNS }, () => {
    const started = performance.now();
    const result = spawnSync(process.execPath, args, { stdio: 'ignore' });
    if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}`);
    return performance.now() - started;
  });
  return percentile(times, 50);
}

/** Fast start (issue #19): commands that make no model call load no model client; Node's own start is the floor. */
export function startBenchmarks(): void {
  process.stdout.write(`\n## Start (issue #19) — load average ${loadavg().map((load) => load.toFixed(2)).join(' ')}\n`);
  const dataDir = mkdtempSync(join(tmpdir(), 'archon-bench-start-'));
  try {
    line(`node -e 0 (the floor), p50 of ${RUNS}`, ms(p50(['-e', '0'])));
    line(`archon --help, p50 of ${RUNS}`, ms(p50([CLI, '--help'])), '< 150 ms');
    line(`archon runs (empty data dir), p50 of ${RUNS}`, ms(p50([CLI, 'runs', '--data-dir', dataDir])));
    line(`archon estop --reset, p50 of ${RUNS}`, ms(p50([CLI, 'estop', '--reset', '--data-dir', dataDir])));
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
