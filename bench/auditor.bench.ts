import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createAuditKey, findAuditSecrets } from '../src/auditor/audit-key';
import { AuditLog, type AuditEntry } from '../src/auditor/audit-log';
import { Auditor } from '../src/auditor/auditor';
import type { RunEvent } from '../src/shared/schemas/events';
import { line } from './support';

/** Appends with the hash chain, HMAC and synchronous=FULL commits, in batches as the bus delivers them. */
export async function auditorBenchmarks(): Promise<void> {
  process.stdout.write('\n## Auditor (issue #6)\n');
  const dataDir = mkdtempSync(join(tmpdir(), 'archon-bench-audit-'));
  const keyDir = mkdtempSync(join(tmpdir(), 'archon-bench-audit-keys-'));
  const log = AuditLog.open(dataDir, createAuditKey(findAuditSecrets(dataDir, keyDir)));
  try {
    const total = 50_000;
    const batch = 500;
    const started = performance.now();
    for (let first = 1; first <= total; first += batch) {
      const entries: AuditEntry[] = Array.from({ length: batch }, (_, index) => {
        const seq = first + index;
        const event: RunEvent = { type: 'tool.completed', runId: 'bench', seq, ts: new Date().toISOString(), stepId: `s${seq % 64}`, tool: 'calculator', callId: `c${seq}`, status: 'success', content: `result ${seq}` };
        return { runId: event.runId, eventSeq: seq, type: event.type, ts: event.ts, body: event };
      });
      log.append(entries);
    }
    const seconds = (performance.now() - started) / 1000;
    line(`audit append, chained + HMAC, batches of ${batch}`, `${Math.round(total / seconds).toLocaleString('en')} rec/s`, '≥ 20,000 rec/s');
    const verifyStarted = performance.now();
    const inspected = Auditor.inspect(dataDir, keyDir);
    const result = inspected.verify();
    inspected.close();
    line(`audit verify of ${total.toLocaleString('en')} records`, `${Math.round(performance.now() - verifyStarted)} ms`, result.intact ? undefined : 'FAILED');
  } finally {
    log.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(keyDir, { recursive: true, force: true });
  }
}
