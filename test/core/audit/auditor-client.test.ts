import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AuditorClient } from '../../../src/core/audit/auditor-client';
import { createRuntime, type ArchonRuntime } from '../../../src/core/runtime';
import { forkAuditor } from '../../../src/hosts/node/auditor-launcher';
import { builtFile } from '../../support/built';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();

function startRun(runtime: ArchonRuntime, runId: string): void {
  const options = { modelUrl: 'http://127.0.0.1:9/v1', model: 'm', policy: 'balanced', concurrency: 1, maxTokens: null, maxCostUsd: null, workspace: runtime.dataDir, maxIterations: 10, verification: 'checks', repairBudget: 2, maxReplans: 3 } as const;
  runtime.store.runs.createRun({ id: runId, goal: 'g', policy: 'balanced', options, now: new Date().toISOString() });
}

function connect(runtime: ArchonRuntime, troubles: string[] = []): AuditorClient {
  return new AuditorClient(forkAuditor(runtime.dataDir, builtFile('node/auditor.js')), runtime.bus, (message) => troubles.push(message));
}

describe('AuditorClient (with the built auditor process)', () => {
  it('follows committed events, answers reports and verification, and drains every event before it lets go', async () => {
    const runtime = createRuntime({ dataDir: tempDir() });
    const client = connect(runtime);
    expect(await client.started()).toEqual({ kind: 'ready' });
    expect(() => client.assertReady()).not.toThrow();
    startRun(runtime, 'r1');
    runtime.events.append('r1', 'run.started', { goal: 'g', policy: 'balanced', toolApproval: {} });
    runtime.events.flush();
    await expect.poll(async () => (await client.report({ runId: 'r1' })).runs[0]?.goal, { timeout: 20_000 }).toBe('g');
    for (let index = 0; index < 40; index++) runtime.events.append('r1', 'step.started', { stepId: `s${index}` });
    runtime.close();
    await client.drain();
    const reopened = createRuntime({ dataDir: runtime.dataDir });
    const inspected = connect(reopened);
    expect(await inspected.started()).toEqual({ kind: 'ready' });
    expect(await inspected.verify()).toEqual({ intact: true, records: 41 });
    await inspected.drain();
    reopened.close();
  });

  it('refuses runs, naming the reset, when the log cannot be vouched for', async () => {
    const runtime = createRuntime({ dataDir: tempDir() });
    const first = connect(runtime);
    await first.started();
    startRun(runtime, 'r1');
    runtime.events.append('r1', 'step.started', { stepId: 'a' });
    runtime.events.flush();
    await first.drain();
    rmSync(join(runtime.dataDir, 'audit.db'));
    const second = connect(runtime);
    expect(await second.started()).toMatchObject({ kind: 'refused', problem: expect.stringMatching(/audit\.db is missing/) });
    expect(() => second.assertReady()).toThrow(/archon audit reset --acknowledge/);
    expect(await second.verify()).toMatchObject({ intact: false, problem: expect.stringMatching(/audit\.db is missing/) });
    await second.drain();
    runtime.close();
  });

  it('says so when the auditor dies after it started, and lets no run start without it', async () => {
    const runtime = createRuntime({ dataDir: tempDir() });
    const troubles: string[] = [];
    const channel = forkAuditor(runtime.dataDir, builtFile('node/auditor.js'));
    const client = new AuditorClient(channel, runtime.bus, (message) => troubles.push(message));
    expect(await client.started()).toEqual({ kind: 'ready' });
    process.kill(channel.pid ?? 0, 'SIGKILL');
    await expect.poll(() => troubles, { timeout: 20_000 }).toEqual([expect.stringMatching(/exited .*next start catches up/)]);
    expect(() => client.assertReady()).toThrow(/not running/);
    await expect(client.verify()).rejects.toThrow(/not running/);
    await client.drain();
    runtime.close();
  });
});
