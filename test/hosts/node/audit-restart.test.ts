import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AUDIT_DB_FILE } from '../../../src/auditor/audit-log';
import { sleep } from '../../../src/shared/abort';
import { planReply, startModelServer, type ScriptedModelServer, type ScriptedReply } from '../../kit/scripted-model-server';
import { spawnArchon } from '../../support/archon-process';
import { useTempDirs } from '../../support/temp-dir';

// Real processes on a shared 2-core machine: the bounds are against hangs, not speed targets.
vi.setConfig({ testTimeout: 240_000 });
const tempDir = useTempDirs();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The auditor processes the `archon` process with this PID started (from the process table). */
function auditorPids(archonPid: number): number[] {
  return execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([, ppid, ...args]) => Number(ppid) === archonPid && args.some((arg) => arg.endsWith('auditor.js')))
    .map(([pid]) => Number(pid));
}

function query<T>(dataDir: string, file: string, sql: string): T[] {
  const db = new Database(join(dataDir, file), { readonly: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

/** (run, seq) of every event in archon.db that audit.db lacks. */
function missingFromLog(dataDir: string): string[] {
  const logged = new Set(query<{ run_id: string; event_seq: number }>(dataDir, AUDIT_DB_FILE, 'SELECT run_id, event_seq FROM records WHERE run_id IS NOT NULL').map((row) => `${row.run_id}/${row.event_seq}`));
  return query<{ run_id: string; seq: number }>(dataDir, 'archon.db', 'SELECT run_id, seq FROM events')
    .map((row) => `${row.run_id}/${row.seq}`)
    .filter((event) => !logged.has(event));
}

const restartRecords = (dataDir: string) => query<{ seq: number; canonical_json: string }>(dataDir, AUDIT_DB_FILE, "SELECT seq, canonical_json FROM records WHERE type = 'auditor.restarted'");

/** Polls until `check` holds; bounded, so a test fails rather than hangs. */
async function until(check: () => boolean, what: string, signal = AbortSignal.timeout(120_000)): Promise<void> {
  while (!check()) {
    if (signal.aborted) throw new Error(`gave up waiting for ${what}`);
    await sleep(50, signal).catch(() => undefined);
  }
}

/** What went wrong while a request was held (asserted by each test: a throw there would only hang the run). */
let heldFailures: unknown[] = [];

/** A one-step plan whose first step request is held until `atStep` has done its part. */
function holdingServer(atStep: () => Promise<void>): Promise<ScriptedModelServer> {
  let held = false;
  heldFailures = [];
  return startModelServer({
    reply: async (request): Promise<ScriptedReply> => {
      if (request.purpose === 'plan') return planReply([{ id: 'greet', description: 'say hello' }]);
      if (request.purpose === 'final') return { content: 'said hello' };
      if (!held) {
        held = true;
        await atStep().catch((error: unknown) => heldFailures.push(error));
      }
      return { content: 'hello' };
    },
  });
}

describe('the supervised auditor of `archon run`', () => {
  it('kill -9 of the auditor mid-run: it is restarted, records `auditor.restarted` and every event of the run; verify says intact', async () => {
    const dataDir = tempDir();
    const box: { archonPid?: number; killed?: number; restartMs?: number } = {};
    server = await holdingServer(async () => {
      const archonPid = box.archonPid as number;
      const [auditor] = auditorPids(archonPid);
      box.killed = auditor;
      const killedAt = performance.now();
      process.kill(auditor as number, 'SIGKILL');
      await until(() => restartRecords(dataDir).length === 1, 'the restarted auditor to record its restart');
      box.restartMs = Math.round(performance.now() - killedAt);
    });
    const run = spawnArchon(['run', 'say hello', '--model-url', server.url, '--data-dir', dataDir, '--workspace', tempDir(), '--approve', 'auto', '--json']);
    box.archonPid = run.child.pid;
    const result = await run.done;
    expect(heldFailures).toEqual([]);
    expect(result.status, result.stderr).toBe(0);
    expect(box.killed).toBeGreaterThan(0);
    expect(result.stderr).toMatch(/auditor process stopped \(killed by SIGKILL\); it was restarted/);
    process.stdout.write(`auditor restarted and recording ${box.restartMs} ms after kill -9\n`);

    const [restart] = restartRecords(dataDir);
    expect(JSON.parse(restart?.canonical_json ?? '{}')).toMatchObject({ type: 'auditor.restarted', signal: 'SIGKILL', exitCode: null, recentRestarts: 1 });
    const runEnd = query<{ seq: number }>(dataDir, AUDIT_DB_FILE, "SELECT seq FROM records WHERE type = 'run.completed'");
    // Restarted while the run went on: the restart is in the log before the run's end.
    expect(restart?.seq).toBeLessThan(runEnd[0]?.seq ?? 0);
    expect(missingFromLog(dataDir)).toEqual([]);
    const verdict = spawnArchon(['audit', 'verify', '--data-dir', dataDir]);
    const verified = await verdict.done;
    expect(verified.status).toBe(0);
    expect(verified.stdout).toMatch(/^Audit log intact/);
    expect(verified.stdout).not.toMatch(/behind/);
  });

  it('an auditor that keeps dying (a fourth death within a minute): the run is paused saying why, and resumable', async () => {
    const dataDir = tempDir();
    const box: { archonPid?: number } = {};
    server = await holdingServer(async () => {
      for (let death = 1; death <= 4; death++) {
        const [auditor] = auditorPids(box.archonPid as number);
        process.kill(auditor as number, 'SIGKILL');
        if (death < 4) await until(() => restartRecords(dataDir).length === death, `restart ${death}`);
      }
      await until(() => query(dataDir, 'archon.db', 'SELECT id FROM runs WHERE control_json IS NOT NULL').length === 1, 'the pause request');
    });
    const run = spawnArchon(['run', 'say hello', '--model-url', server.url, '--data-dir', dataDir, '--workspace', tempDir(), '--approve', 'auto']);
    box.archonPid = run.child.pid;
    const result = await run.done;
    expect(heldFailures).toEqual([]);
    expect(result.status, result.stderr).toBe(6);
    expect(result.stderr).toMatch(/The audit cannot be kept: the auditor died 4 times within 60 seconds \(last: killed by SIGKILL\)/);
    expect(result.stderr).toMatch(/Run paused: Paused by Archon, because the auditor died 4 times/);
    const [paused] = query<{ id: string; status: string }>(dataDir, 'archon.db', 'SELECT id, status FROM runs');
    expect(paused?.status).toBe('paused');

    const resumed = await spawnArchon(['resume', paused?.id as string, '--model-url', server.url, '--data-dir', dataDir, '--approve', 'auto']).done;
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(missingFromLog(dataDir)).toEqual([]);
    expect((await spawnArchon(['audit', 'verify', '--data-dir', dataDir]).done).stdout).toMatch(/^Audit log intact: \d+ records, chain and signatures verified\.\n$/);
  });

  it('the auditor gone before it caught up: verify says behind (exit 0, not TAMPERED) until the next run records it; a planted edit still exits 1', async () => {
    const dataDir = tempDir();
    const box: { archonPid?: number; frozen?: number } = {};
    server = await holdingServer(async () => {
      const [auditor] = auditorPids(box.archonPid as number);
      box.frozen = auditor;
      // Frozen, not dead: the supervisor sees nothing, and the run goes on without it.
      process.kill(auditor as number, 'SIGSTOP');
    });
    const run = spawnArchon(['run', 'say hello', '--model-url', server.url, '--data-dir', dataDir, '--workspace', tempDir(), '--approve', 'auto', '--json']);
    box.archonPid = run.child.pid;
    await until(() => box.frozen !== undefined, 'the step request');
    await until(() => query(dataDir, 'archon.db', "SELECT id FROM runs WHERE status = 'completed'").length === 1, 'the run to complete');
    // The host (waiting for the frozen auditor to drain) dies first, so nothing restarts or drains the auditor.
    run.child.kill('SIGKILL');
    // It shares the host's output pipes: they close once both are gone.
    process.kill(box.frozen as number, 'SIGKILL');
    await run.done;
    expect(heldFailures).toEqual([]);
    const missing = missingFromLog(dataDir).length;
    expect(missing).toBeGreaterThan(0);

    const behind = await spawnArchon(['audit', 'verify', '--data-dir', dataDir]).done;
    expect(behind.status).toBe(0);
    expect(behind.stdout).toMatch(/^Audit log intact/);
    expect(behind.stdout).toContain(`behind: ${missing} events not yet recorded`);
    expect(behind.stdout).not.toMatch(/TAMPERED/);

    const next = await spawnArchon(['run', 'say hello', '--model-url', server.url, '--data-dir', dataDir, '--workspace', tempDir(), '--approve', 'auto']).done;
    expect(next.status, next.stderr).toBe(0);
    expect(missingFromLog(dataDir)).toEqual([]);
    const caughtUp = await spawnArchon(['audit', 'verify', '--data-dir', dataDir]).done;
    expect(caughtUp.status).toBe(0);
    expect(caughtUp.stdout).not.toMatch(/behind/);

    const db = new Database(join(dataDir, AUDIT_DB_FILE));
    db.exec('DROP TRIGGER records_no_update');
    db.prepare("UPDATE records SET canonical_json = replace(canonical_json, 'say hello', 'say goodbye') WHERE seq = (SELECT MIN(seq) FROM records WHERE type = 'run.started')").run();
    db.close();
    const tampered = await spawnArchon(['audit', 'verify', '--data-dir', dataDir]).done;
    expect(tampered.status).toBe(1);
    expect(tampered.stdout).toMatch(/TAMPERED: record \d+ was altered.*\(first bad record: \d+\)/);
  });
});
