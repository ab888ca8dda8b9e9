import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { AUDIT_DB_FILE } from '../../src/auditor/audit-log';
import { BATCH } from '../../src/auditor/auditor';
import { createRuntime } from '../../src/core/runtime';
import { runArchon } from '../support/archon-process';
import { builtFile } from '../support/built';
import { useTempDirs } from '../support/temp-dir';

const tempDir = useTempDirs();
const RUNS = 4;
const PER_RUN = 10_000;
const TOTAL = RUNS * PER_RUN;

/** The built auditor process on a data dir; it catches up on archon.db before it says it is ready. */
function startAuditor(dataDir: string): { child: ChildProcess; message(type: string): Promise<unknown>; exited: Promise<number | null> } {
  const child = fork(builtFile('node/auditor.js'), [dataDir], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'json' });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const message = (type: string) =>
    new Promise<unknown>((resolve, reject) => {
      const listener = (raw: unknown) => {
        if ((raw as { type?: string }).type !== type) return;
        child.off('message', listener);
        resolve(raw);
      };
      child.on('message', listener);
      void exited.then((code) => reject(new Error(`the auditor exited (${code}) before it said ${type}`)));
    });
  return { child, message, exited };
}

async function drained(dataDir: string): Promise<unknown> {
  const auditor = startAuditor(dataDir);
  const ready = await auditor.message('ready');
  auditor.child.send({ type: 'drain' });
  await auditor.message('drained');
  await auditor.exited;
  return ready;
}

function recordCount(dataDir: string): number {
  const db = new Database(join(dataDir, AUDIT_DB_FILE), { readonly: true, timeout: 5000 });
  try {
    return (db.prepare('SELECT count(*) AS n FROM records').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

describe('the auditor records in batches', { timeout: 180_000 }, () => {
  it(`kill -9 of the auditor while it commits batches of up to ${BATCH}: the next start records the rest once, and the chain verifies`, async () => {
    const dataDir = tempDir();
    expect(await drained(dataDir)).toEqual({ type: 'ready', audited: 0 });
    const runtime = createRuntime({ dataDir });
    const options = { modelUrl: 'http://127.0.0.1:9/v1', model: 'm', policy: 'balanced', concurrency: 1, maxTokens: null, maxCostUsd: null, workspace: dataDir, maxIterations: 10, verification: 'checks', repairBudget: 2, maxReplans: 3 } as const;
    for (let run = 0; run < RUNS; run++) {
      runtime.store.runs.createRun({ id: `r${run}`, goal: 'g', policy: 'balanced', options, now: new Date().toISOString() });
      for (let index = 0; index < PER_RUN; index++) runtime.events.append(`r${run}`, 'step.started', { stepId: `s${index}` });
      runtime.events.flush();
    }
    runtime.close();

    const auditor = startAuditor(dataDir);
    await expect.poll(() => recordCount(dataDir), { timeout: 120_000, interval: 10 }).toBeGreaterThan(0);
    auditor.child.kill('SIGKILL');
    expect(await auditor.exited).toBeNull();
    const atKill = recordCount(dataDir);
    expect(atKill).toBeLessThan(TOTAL);

    expect(await drained(dataDir)).toEqual({ type: 'ready', audited: TOTAL - atKill });
    expect(recordCount(dataDir)).toBe(TOTAL);
    const verify = runArchon(['audit', 'verify', '--data-dir', dataDir]);
    expect(verify.stdout).toBe(`Audit log intact: ${TOTAL} records, chain and signatures verified.\n`);
    expect(verify.status).toBe(0);
  });
});
