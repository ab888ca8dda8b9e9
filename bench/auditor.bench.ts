import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createAuditKey, findAuditSecrets } from '../src/auditor/audit-key';
import { AuditLog, type AuditEntry } from '../src/auditor/audit-log';
import { Auditor, BATCH } from '../src/auditor/auditor';
import { createRuntime } from '../src/core/runtime';
import type { RunEvent } from '../src/shared/schemas/events';
import { line } from './support';

const TOTAL = 50_000;

/** Wall-clock records per second, and per second of this process's CPU (what a loaded machine does not distort). */
function rates(records: number, work: () => void): string {
  const cpu = process.cpuUsage();
  const started = performance.now();
  work();
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const cpuSeconds = (used.user + used.system) / 1e6;
  return `${Math.round(records / seconds).toLocaleString('en')} rec/s (${Math.round(records / cpuSeconds).toLocaleString('en')} per CPU-s)`;
}

function tempDirs(): { dataDir: string; keyDir: string; remove(): void } {
  const dataDir = mkdtempSync(join(tmpdir(), 'archon-bench-audit-'));
  const keyDir = mkdtempSync(join(tmpdir(), 'archon-bench-audit-keys-'));
  return { dataDir, keyDir, remove: () => [dataDir, keyDir].forEach((dir) => rmSync(dir, { recursive: true, force: true })) };
}

/** AuditLog.append itself: the hash chain, HMAC and synchronous=FULL commits, in the auditor's batches. */
function appendBenchmark(): void {
  const dirs = tempDirs();
  const log = AuditLog.open(dirs.dataDir, createAuditKey(findAuditSecrets(dirs.dataDir, dirs.keyDir)));
  try {
    const figure = rates(TOTAL, () => {
      for (let first = 1; first <= TOTAL; first += BATCH) {
        const entries: AuditEntry[] = Array.from({ length: BATCH }, (_, index) => {
          const seq = first + index;
          const event: RunEvent = { type: 'tool.completed', runId: 'bench', seq, ts: new Date().toISOString(), stepId: `s${seq % 64}`, tool: 'calculator', callId: `c${seq}`, status: 'success', content: `result ${seq}` };
          return { runId: event.runId, eventSeq: seq, type: event.type, ts: event.ts, body: event };
        });
        log.append(entries);
      }
    });
    line(`audit append, chained + HMAC, batches of ${BATCH.toLocaleString('en')}`, figure, '≥ 20,000 rec/s');
  } finally {
    log.close();
    dirs.remove();
  }
}

/** The auditor process's own path: archon.db's events (4 runs) read, chained and committed in batches by `catchUp`, then verified. */
function followBenchmark(): void {
  const dirs = tempDirs();
  // The chain starts with the data dir, before its first event, as in use.
  Auditor.start(dirs.dataDir, dirs.keyDir).close();
  const runtime = createRuntime({ dataDir: dirs.dataDir });
  try {
    const options = { modelUrl: 'http://127.0.0.1:9/v1', model: 'm', policy: 'balanced', concurrency: 1, maxTokens: null, maxCostUsd: null, workspace: dirs.dataDir, maxIterations: 10, verification: 'checks', repairBudget: 2, maxReplans: 3 } as const;
    for (let run = 0; run < 4; run++) {
      const runId = `bench-${run}`;
      runtime.store.runs.createRun({ id: runId, goal: 'g', policy: 'balanced', options, now: new Date().toISOString() });
      for (let index = 0; index < TOTAL / 4; index++) runtime.events.append(runId, 'tool.completed', { stepId: `s${index % 64}`, tool: 'calculator', callId: `c${index}`, status: 'success', content: `result ${index}` });
      runtime.events.flush();
    }
    const auditor = Auditor.start(dirs.dataDir, dirs.keyDir);
    let recorded = 0;
    const figure = rates(TOTAL, () => (recorded = auditor.catchUp()));
    auditor.close();
    line(`audit follow of archon.db (auditor catch-up, 4 runs)`, figure, recorded === TOTAL ? '≥ 20,000 rec/s' : `FAILED: ${recorded} recorded`);
    const verifyStarted = performance.now();
    const inspected = Auditor.inspect(dirs.dataDir, dirs.keyDir);
    const result = inspected.verify();
    inspected.close();
    line(`audit verify of ${TOTAL.toLocaleString('en')} records`, `${Math.round(performance.now() - verifyStarted)} ms`, result.intact ? undefined : 'FAILED');
  } finally {
    runtime.close();
    dirs.remove();
  }
}

export async function auditorBenchmarks(): Promise<void> {
  process.stdout.write('\n## Auditor (issues #6, #19)\n');
  appendBenchmark();
  followBenchmark();
}
