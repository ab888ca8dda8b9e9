import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { AUDIT_DB_FILE } from '../../src/auditor/audit-log';
import { leaseRun } from '../../src/core/run/run-lease';
import { supervisedAuditorClient } from '../../src/core/audit/auditor-supervisor';
import { createRuntime, type ArchonRuntime } from '../../src/core/runtime';
import { forkAuditor } from '../../src/hosts/node/auditor-launcher';
import { builtFile } from '../support/built';
import { useTempDirs } from '../support/temp-dir';

const tempDir = useTempDirs();

function startRun(runtime: ArchonRuntime, runId: string): void {
  const options = { modelUrl: 'http://127.0.0.1:9/v1', model: 'm', policy: 'balanced', concurrency: 1, maxTokens: null, maxCostUsd: null, workspace: runtime.dataDir, maxIterations: 10, verification: 'checks', repairBudget: 2, maxReplans: 3 } as const;
  runtime.store.runs.createRun({ id: runId, goal: 'g', policy: 'balanced', options, now: new Date().toISOString() });
}

function restartRecords(dataDir: string): { signal: string | null; recentRestarts: number }[] {
  const db = new Database(join(dataDir, AUDIT_DB_FILE), { readonly: true });
  try {
    return (db.prepare("SELECT canonical_json FROM records WHERE type = 'auditor.restarted' ORDER BY seq").all() as { canonical_json: string }[]).map((row) => JSON.parse(row.canonical_json));
  } finally {
    db.close();
  }
}

function supervised(runtime: ArchonRuntime, said: string[]) {
  return supervisedAuditorClient(() => forkAuditor(runtime.dataDir, builtFile('node/auditor.js')), runtime, (message) => said.push(message));
}

const POLL = { timeout: 30_000, interval: 50 };

describe('the supervised auditor process', { timeout: 120_000 }, () => {
  it('a request the dead auditor left unanswered is answered by its successor, which records its restart and the events it missed', async () => {
    const runtime = createRuntime({ dataDir: tempDir() });
    const said: string[] = [];
    const { client, auditor } = supervised(runtime, said);
    expect(await client.started()).toEqual({ kind: 'ready' });
    const first = auditor.pid as number;
    startRun(runtime, 'r1');
    // Frozen, then killed: the question reaches a process that never answers it.
    process.kill(first, 'SIGSTOP');
    runtime.events.append('r1', 'step.started', { stepId: 'a' });
    runtime.events.flush();
    const answer = client.verify();
    process.kill(first, 'SIGKILL');
    expect(await answer).toEqual({ intact: true, records: 2 });
    expect(auditor.pid).not.toBe(first);
    expect(restartRecords(runtime.dataDir)).toEqual([expect.objectContaining({ type: 'auditor.restarted', signal: 'SIGKILL', exitCode: null, recentRestarts: 1 })]);
    expect(said).toEqual([expect.stringMatching(/stopped \(killed by SIGKILL\); it was restarted .*restart 1 of at most 3 a minute/)]);
    expect(() => client.assertReady()).not.toThrow();
    runtime.close();
    await client.drain();
  });

  it('a fourth death within a minute: no more restarts, the runs this process drives are paused saying why, and no run starts', async () => {
    const runtime = createRuntime({ dataDir: tempDir() });
    const said: string[] = [];
    const { client, auditor } = supervised(runtime, said);
    await client.started();
    startRun(runtime, 'driven');
    const lease = leaseRun(runtime.store.runs, 'driven');
    for (let death = 1; death <= 4; death++) {
      const pid = auditor.pid as number;
      process.kill(pid, 'SIGKILL');
      if (death < 4) await expect.poll(() => restartRecords(runtime.dataDir).length, POLL).toBe(death);
    }
    await expect.poll(() => runtime.store.runs.controlRequest('driven'), POLL).toEqual({ action: 'pause', by: expect.stringMatching(/the auditor died 4 times within 60 seconds \(last: killed by SIGKILL\)/) });
    expect(said).toContainEqual(expect.stringMatching(/The audit cannot be kept: .*Paused driven; no run starts until Archon is restarted/));
    expect(() => client.assertReady()).toThrow(/not running/);
    expect(restartRecords(runtime.dataDir)).toHaveLength(3);
    lease.release();
    await client.drain();
    runtime.close();
  });

  it('a restarted auditor that cannot vouch for the log (audit.db removed while it was down): runs are paused, questions still answered, no run starts until the reset', async () => {
    const runtime = createRuntime({ dataDir: tempDir() });
    const said: string[] = [];
    const { client, auditor } = supervised(runtime, said);
    await client.started();
    startRun(runtime, 'driven');
    const lease = leaseRun(runtime.store.runs, 'driven');
    runtime.events.append('driven', 'step.started', { stepId: 'a' });
    runtime.events.flush();
    await expect.poll(async () => (await client.verify()).records, POLL).toBe(1);
    const pid = auditor.pid as number;
    process.kill(pid, 'SIGSTOP');
    for (const suffix of ['', '-wal', '-shm']) rmSync(join(runtime.dataDir, AUDIT_DB_FILE + suffix), { force: true });
    const answer = client.verify();
    process.kill(pid, 'SIGKILL');
    expect(await answer).toMatchObject({ intact: false, problem: expect.stringMatching(/audit\.db is missing/) });
    expect(runtime.store.runs.controlRequest('driven')).toEqual({ action: 'pause', by: expect.stringMatching(/the restarted auditor cannot vouch for the log: audit\.db is missing/) });
    expect(() => client.assertReady()).toThrow(/archon audit reset --acknowledge/);
    lease.release();
    runtime.close();
    await client.drain();
  });
});
