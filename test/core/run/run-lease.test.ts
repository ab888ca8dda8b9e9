import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { LEASE_STALE_MS, leaseRun } from '../../../src/core/run/run-lease';
import { useRuntimes } from '../../support/runtime';

const openRuntime = useRuntimes();

function withRun() {
  const runtime = openRuntime();
  const options = { modelUrl: 'http://127.0.0.1:1/v1', model: '', policy: 'balanced' as const, concurrency: null, maxTokens: null, maxCostUsd: null, workspace: '/tmp', maxIterations: 10, verification: 'checks' as const, repairBudget: 2, maxReplans: 3 };
  runtime.store.runs.createRun({ id: 'r', goal: 'g', policy: 'balanced', options, now: new Date().toISOString() });
  return runtime.store.runs;
}

/** The PID of a process that has already exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

describe('run leases', () => {
  it('refuses a run another live process holds, naming its PID', () => {
    const runs = withRun();
    const parent = process.ppid;
    expect(runs.acquireLease('r', parent, Date.now(), LEASE_STALE_MS, () => true)).toEqual({ ok: true });
    expect(() => leaseRun(runs, 'r')).toThrow(expect.objectContaining({ code: 'RUN_LEASED', message: expect.stringContaining(`PID ${parent}`) }));
  });

  it('takes over a lease whose process is gone', () => {
    const runs = withRun();
    runs.acquireLease('r', deadPid(), Date.now(), LEASE_STALE_MS, () => true);
    const lease = leaseRun(runs, 'r');
    lease.release();
    expect(runs.acquireLease('r', process.ppid, Date.now(), LEASE_STALE_MS, () => true)).toEqual({ ok: true });
  });

  it('takes over a lease whose heartbeat is stale, even when its PID is alive (reused)', () => {
    const runs = withRun();
    runs.acquireLease('r', process.ppid, Date.now() - LEASE_STALE_MS - 1, LEASE_STALE_MS, () => true);
    expect(() => leaseRun(runs, 'r').release()).not.toThrow();
  });

  it('tells the holder when another process took the run over, so it stops driving it', async () => {
    const runs = withRun();
    const lease = leaseRun(runs, 'r');
    const lost: string[] = [];
    lease.onLost((error) => lost.push(error.code));
    // A second process finds the heartbeat stale (this one was stopped, say with Ctrl-Z) and takes over.
    expect(runs.acquireLease('r', process.ppid, Date.now() + LEASE_STALE_MS + 1, LEASE_STALE_MS, () => true)).toEqual({ ok: true });
    await expect.poll(() => lost, { timeout: 10_000 }).toEqual(['RUN_LEASED']);
    lease.release();
  });
});
