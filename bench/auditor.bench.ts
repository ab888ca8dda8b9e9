import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadAuditSecrets } from '../src/auditor/audit-key';
import { AuditLog } from '../src/auditor/audit-log';
import type { RunEvent } from '../src/shared/schemas/events';
import { line } from './support';

/** Appends with the hash chain, HMAC and synchronous=FULL commits, in batches as the bus delivers them. */
export async function auditorBenchmarks(): Promise<void> {
  process.stdout.write('\n## Auditor (issue #6)\n');
  const dataDir = mkdtempSync(join(tmpdir(), 'archon-bench-audit-'));
  const keyDir = mkdtempSync(join(tmpdir(), 'archon-bench-audit-keys-'));
  const log = AuditLog.open(dataDir, loadAuditSecrets(dataDir, keyDir));
  try {
    const total = 50_000;
    const batch = 500;
    const started = performance.now();
    for (let seq = 1; seq <= total; seq++) {
      const event: RunEvent = { type: 'tool.completed', runId: 'bench', seq, ts: new Date().toISOString(), stepId: `s${seq % 64}`, tool: 'calculator', callId: `c${seq}`, status: 'success', content: `result ${seq}` };
      log.record(event);
      if (seq % batch === 0) log.flush();
    }
    log.flush();
    const seconds = (performance.now() - started) / 1000;
    line(`audit append, chained + HMAC, batches of ${batch}`, `${Math.round(total / seconds).toLocaleString('en')} rec/s`, '≥ 20,000 rec/s');
    const verifyStarted = performance.now();
    const result = log.verify();
    line(`audit verify of ${total.toLocaleString('en')} records`, `${Math.round(performance.now() - verifyStarted)} ms`, result.intact ? undefined : 'FAILED');
  } finally {
    log.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(keyDir, { recursive: true, force: true });
  }
}
