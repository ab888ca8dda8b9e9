import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, truncateSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATA_DIR_ID_FILE, findAuditSecrets } from '../../src/auditor/audit-key';
import { AUDIT_DB_FILE } from '../../src/auditor/audit-log';
import type { RunEvent } from '../../src/shared/schemas/events';
import { planReply, startModelServer, toolMessagesOf, type ScriptedModelServer } from '../kit/scripted-model-server';
import { spawnArchon } from '../support/archon-process';
import { useTempDirs } from '../support/temp-dir';

const tempDir = useTempDirs();
let server: ScriptedModelServer;
beforeAll(async () => {
  server = await startModelServer({
    reply: (request) =>
      request.purpose === 'plan'
        ? planReply([
            { id: 'a', description: 'append a line' },
            { id: 'b', description: 'append another', dependencies: ['a'] },
          ])
        : toolMessagesOf(request).length > 0
          ? { content: 'done' }
          : { toolCalls: [{ name: 'run_command', arguments: { command: 'sleep 0.2; echo MARK >> ledger.txt' } }] },
  });
});
afterAll(() => server.close());

const archon = (args: string[]) => spawnArchon(args).done;
const run = (dataDir: string) => archon(['run', 'append twice', '--model-url', server.url, '--data-dir', dataDir, '--workspace', tempDir(), '--approve', 'auto', '--json']);
const verify = (dataDir: string) => archon(['audit', 'verify', '--data-dir', dataDir]);

function removeLog(dataDir: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(join(dataDir, AUDIT_DB_FILE + suffix), { force: true });
}

function runIds(dataDir: string): string[] {
  const archonDb = new Database(join(dataDir, 'archon.db'), { readonly: true });
  try {
    return (archonDb.prepare('SELECT id FROM runs ORDER BY created_at, rowid').all() as { id: string }[]).map((row) => row.id);
  } finally {
    archonDb.close();
  }
}

/** (run, seq) of every event in archon.db that audit.db lacks. */
function missingFromLog(dataDir: string): string[] {
  const archonDb = new Database(join(dataDir, 'archon.db'), { readonly: true });
  const auditDb = new Database(join(dataDir, AUDIT_DB_FILE), { readonly: true });
  const logged = new Set((auditDb.prepare('SELECT run_id, event_seq FROM records WHERE run_id IS NOT NULL').all() as { run_id: string; event_seq: number }[]).map((row) => `${row.run_id}/${row.event_seq}`));
  const events = (archonDb.prepare('SELECT run_id, seq FROM events').all() as { run_id: string; seq: number }[]).map((row) => `${row.run_id}/${row.seq}`);
  archonDb.close();
  auditDb.close();
  return events.filter((event) => !logged.has(event));
}

// Each case drives several real `archon` processes one after another: slow on a shared 2-core machine.
describe('the auditor process', { timeout: 180_000 }, () => {
  it.each([
    ['audit.db deleted', (dataDir: string) => removeLog(dataDir), /audit\.db is missing, but its signed head says \d+ records were written/],
    [
      'audit.db emptied',
      (dataDir: string) => {
        for (const suffix of ['-wal', '-shm']) rmSync(join(dataDir, AUDIT_DB_FILE + suffix), { force: true });
        truncateSync(join(dataDir, AUDIT_DB_FILE), 0);
      },
      /audit\.db is empty, but its signed head says \d+ records were written/,
    ],
    ['the key deleted', (dataDir: string) => rmSync(findAuditSecrets(dataDir).keyFile), /key for this data dir is missing .* but audit\.db holds \d+ records/],
    [
      'audit.db, its head and the data dir id all removed',
      (dataDir: string) => {
        rmSync(findAuditSecrets(dataDir).headFile);
        removeLog(dataDir);
        rmSync(join(dataDir, DATA_DIR_ID_FILE));
      },
      /archon\.db holds \d+ events but this data dir has no audit chain/,
    ],
  ])('%s: verify says which, no run starts until `archon audit reset --acknowledge`, which starts a new chain naming it', async (_what, damage, verdict) => {
    const dataDir = tempDir();
    expect((await run(dataDir)).status).toBe(0);
    expect((await verify(dataDir)).status).toBe(0);
    damage(dataDir);
    await expectResetNeeded(dataDir, verdict);
  });

  it('an older copy of audit.db restored: verify says it is older than its signed head, and runs wait for the reset', async () => {
    const dataDir = tempDir();
    expect((await run(dataDir)).status).toBe(0);
    const copy = join(tempDir(), 'audit.db.copy');
    copyFileSync(join(dataDir, AUDIT_DB_FILE), copy);
    expect((await run(dataDir)).status).toBe(0);
    removeLog(dataDir);
    copyFileSync(copy, join(dataDir, AUDIT_DB_FILE));
    await expectResetNeeded(dataDir, /audit\.db is older than its signed head: it ends at record \d+ but \d+ were written/);
  });

  it('an older audit.db restored with its older signed head, after a run was deleted from archon.db: verify names the rollback the anchor shows', async () => {
    const dataDir = tempDir();
    const { headFile, anchorFile } = findAuditSecrets(dataDir);
    expect((await run(dataDir)).status).toBe(0);
    expect((await verify(dataDir)).status).toBe(0);
    const aside = tempDir();
    copyFileSync(join(dataDir, AUDIT_DB_FILE), join(aside, AUDIT_DB_FILE));
    copyFileSync(headFile, join(aside, 'head'));
    const [runA] = runIds(dataDir);
    expect((await run(dataDir)).status).toBe(0);
    const intact = await verify(dataDir);
    expect(intact.status).toBe(0);
    const written = Number(/intact: (\d+) records/.exec(intact.stdout)?.[1]);

    const runB = runIds(dataDir).find((id) => id !== runA) as string;
    const archonDb = new Database(join(dataDir, 'archon.db'));
    archonDb.pragma('foreign_keys = ON');
    archonDb.prepare('DELETE FROM runs WHERE id = ?').run(runB);
    archonDb.close();
    removeLog(dataDir);
    copyFileSync(join(aside, AUDIT_DB_FILE), join(dataDir, AUDIT_DB_FILE));
    copyFileSync(join(aside, 'head'), headFile);
    const restored = new Database(join(dataDir, AUDIT_DB_FILE), { readonly: true });
    const older = (restored.prepare('SELECT count(*) AS n FROM records').get() as { n: number }).n;
    restored.close();

    const rollback = new RegExp(`audit\\.db was rolled back to record ${older} while the anchor says ${written} records were written`);
    await expectResetNeeded(dataDir, rollback);
    const [anchor, head] = [anchorFile, headFile].map((file) => JSON.parse(readFileSync(file, 'utf8')) as { seq: number; hash: string });
    expect({ seq: anchor?.seq, hash: anchor?.hash }).toEqual({ seq: head?.seq, hash: head?.hash });
  });

  it('a moved data dir keeps its key: verify says intact and runs go on', async () => {
    const dataDir = tempDir();
    expect((await run(dataDir)).status).toBe(0);
    const moved = join(tempDir(), 'elsewhere', 'archon-data');
    mkdirSync(dirname(moved), { recursive: true });
    renameSync(dataDir, moved);
    const verdict = await verify(moved);
    expect(verdict.stdout).toMatch(/^Audit log intact/);
    expect(verdict.status).toBe(0);
    expect((await run(moved)).status).toBe(0);
    expect((await verify(moved)).status).toBe(0);
    expect(missingFromLog(moved)).toEqual([]);
  });

  it('audit.db held locked by another writer past SQLite\'s busy timeout, through the end of a run: the auditor waits, says nothing, and records every event once it is free', async () => {
    const dataDir = tempDir();
    const started = spawnArchon(['run', 'append twice', '--model-url', server.url, '--data-dir', dataDir, '--workspace', tempDir(), '--approve', 'auto', '--json']);
    let output = '';
    started.child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const seen = async (type: string) => {
      while (!output.includes(`"type":"${type}"`)) await new Promise((resolve) => started.child.stdout?.once('data', resolve));
    };
    // The auditor is ready before a run's first event: the lock is taken behind it.
    await seen('run.started');
    const other = new Database(join(dataDir, AUDIT_DB_FILE), { timeout: 10_000 });
    other.exec('BEGIN IMMEDIATE');
    await seen('run.completed');
    // Past the 5 s busy timeout of the auditor's tries to record what the run committed, and into the host's drain.
    await new Promise((resolve) => setTimeout(resolve, 7_000));
    other.exec('ROLLBACK');
    other.close();
    const result = await started.done;
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/could not record|locked/i);
    expect(missingFromLog(dataDir)).toEqual([]);
    expect((await verify(dataDir)).status).toBe(0);
  });

  it('kill -9 of `archon run` at random moments: after `archon resume`, verify exits 0 and no event of archon.db is missing from audit.db', async () => {
    for (let round = 0; round < 3; round++) {
      const dataDir = tempDir();
      const started = spawnArchon(['run', 'append twice', '--model-url', server.url, '--data-dir', dataDir, '--workspace', tempDir(), '--approve', 'auto', '--json']);
      const killAfter = 2 + Math.floor(Math.random() * 14);
      let seen = 0;
      let runId = '';
      started.child.stdout?.on('data', (chunk: Buffer) => {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
          runId ||= (JSON.parse(line) as RunEvent).runId;
          if (++seen === killAfter) started.child.kill('SIGKILL');
        }
      });
      await started.done;
      expect(runId).not.toBe('');
      const resumed = await archon(['resume', runId, '--model-url', server.url, '--data-dir', dataDir, '--approve', 'auto']);
      // However the resumed run ends (a kill after the last step leaves nothing to resume), the auditor never refused it.
      expect(resumed.stderr).not.toMatch(/audit/i);
      const verdict = await verify(dataDir);
      expect(verdict.stdout).toMatch(/^Audit log intact/);
      expect(missingFromLog(dataDir)).toEqual([]);
    }
  });
});

async function expectResetNeeded(dataDir: string, verdict: RegExp): Promise<void> {
  const headKept = existsSync(findAuditSecrets(dataDir).headFile);
  const damaged = await verify(dataDir);
  expect(damaged.status).toBe(1);
  expect(damaged.stdout).toMatch(verdict);
  const refused = await run(dataDir);
  expect(refused.status).toBe(2);
  expect(refused.stderr).toMatch(/archon audit reset --acknowledge/);
  expect(refused.stdout).toBe('');

  const reset = await archon(['audit', 'reset', '--acknowledge', 'restored after a disk failure', '--data-dir', dataDir]);
  expect(reset.status, reset.stderr).toBe(0);
  const intact = await verify(dataDir);
  expect(intact.stdout).toMatch(/^Audit log intact/);
  const auditDb = new Database(join(dataDir, AUDIT_DB_FILE), { readonly: true });
  const first = auditDb.prepare('SELECT type, canonical_json FROM records WHERE seq = 1').get() as { type: string; canonical_json: string };
  auditDb.close();
  expect(first.type).toBe('audit.reset');
  expect(JSON.parse(first.canonical_json)).toMatchObject({ reason: 'restored after a disk failure', problem: expect.stringMatching(verdict), oldHead: headKept ? { seq: expect.any(Number), hash: expect.any(String) } : null, oldAnchor: headKept ? { seq: expect.any(Number), hash: expect.any(String) } : null });
  expect(missingFromLog(dataDir)).toEqual([]);
  expect((await run(dataDir)).status).toBe(0);
  expect((await verify(dataDir)).status).toBe(0);
  expect(missingFromLog(dataDir)).toEqual([]);
}
