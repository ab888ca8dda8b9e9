import { createHmac } from 'node:crypto';
import { readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createAuditKey, findAuditSecrets } from '../../src/auditor/audit-key';
import { AUDIT_DB_FILE, AuditLog } from '../../src/auditor/audit-log';
import { Auditor } from '../../src/auditor/auditor';
import { createRuntime } from '../../src/core/runtime';
import { runArchon } from '../support/archon-process';
import { useTempDirs } from '../support/temp-dir';

const tempDir = useTempDirs();

/** A run with `count` events in archon.db, written by the runtime with no auditor following. */
function unauditedRun(dataDir: string, count: number): string {
  const runtime = createRuntime({ dataDir });
  const runId = 'run-unaudited';
  const options = { modelUrl: 'http://127.0.0.1:9/v1', model: 'm', policy: 'balanced', concurrency: 1, maxTokens: null, maxCostUsd: null, workspace: dataDir, maxIterations: 10, verification: 'checks', repairBudget: 2, maxReplans: 3 } as const;
  runtime.store.runs.createRun({ id: runId, goal: 'g', policy: 'balanced', options, now: new Date().toISOString() });
  for (let index = 0; index < count; index++) runtime.events.append(runId, 'step.started', { stepId: `s${index}` });
  runtime.close();
  return runId;
}

function writeLog(records = 10): string {
  const dataDir = tempDir();
  const log = AuditLog.open(dataDir, createAuditKey(findAuditSecrets(dataDir)));
  const entries = Array.from({ length: records }, (_, index) => {
    const event = { type: 'step.started', runId: 'r1', seq: index + 1, ts: new Date(2026, 10, 21, 10, 0, index + 1).toISOString(), stepId: `s${index + 1}` };
    return { runId: event.runId, eventSeq: event.seq, type: event.type, ts: event.ts, body: event };
  });
  log.append(entries);
  log.close();
  return dataDir;
}

/** Opens audit.db as an attacker would: drops the append-only triggers, then edits rows. */
function tamper(dataDir: string, sql: string): void {
  const db = new Database(join(dataDir, AUDIT_DB_FILE));
  db.exec('DROP TRIGGER records_no_update; DROP TRIGGER records_no_delete;');
  db.exec(sql);
  db.close();
}

function verify(dataDir: string) {
  const auditor = Auditor.inspect(dataDir);
  try {
    return auditor.verify();
  } finally {
    auditor.close();
  }
}

describe('the audit log', () => {
  it('keeps audit.db and its -wal and -shm files readable by the user alone (0600)', () => {
    const dataDir = tempDir();
    writeFileSync(join(dataDir, AUDIT_DB_FILE), '', { mode: 0o644 });
    const log = AuditLog.open(dataDir, createAuditKey(findAuditSecrets(dataDir)));
    try {
      const event = { type: 'step.started', runId: 'r1', seq: 1, ts: new Date().toISOString(), stepId: 's' };
      log.append([{ runId: event.runId, eventSeq: event.seq, type: event.type, ts: event.ts, body: event }]);
      for (const suffix of ['', '-wal', '-shm']) expect((statSync(join(dataDir, AUDIT_DB_FILE + suffix)).mode & 0o777).toString(8), suffix).toBe('600');
    } finally {
      log.close();
    }
  });

  it('chains, signs and verifies an intact log', () => {
    const dataDir = writeLog();
    expect(verify(dataDir)).toEqual({ intact: true, records: 10 });
    const db = new Database(join(dataDir, AUDIT_DB_FILE), { readonly: true });
    const rows = db.prepare('SELECT seq, prev_hash, hash FROM records ORDER BY seq').all() as { seq: number; prev_hash: string; hash: string }[];
    db.close();
    rows.slice(1).forEach((row, index) => expect(row.prev_hash).toBe(rows[index]?.hash));
  });

  it('refuses UPDATE and DELETE while its triggers stand', () => {
    const db = new Database(join(writeLog(), AUDIT_DB_FILE));
    expect(() => db.prepare("UPDATE records SET type = 'x' WHERE seq = 1").run()).toThrow(/append-only/);
    expect(() => db.prepare('DELETE FROM records WHERE seq = 1').run()).toThrow(/append-only/);
    db.close();
  });

  it.each([
    ['one field changed', "UPDATE records SET canonical_json = replace(canonical_json, '\"s4\"', '\"s4-forged\"') WHERE seq = 4", 4, /record 4 was altered/],
    ['a row deleted', 'DELETE FROM records WHERE seq = 6', 6, /records 6–6 are missing: deleted/],
    ['a row inserted', "UPDATE records SET seq = seq + 1000 WHERE seq >= 5; INSERT INTO records (seq, ts, run_id, type, canonical_json, prev_hash, hash, hmac) SELECT 5, ts, run_id, type, canonical_json, prev_hash, hash, hmac FROM records WHERE seq = 3; UPDATE records SET seq = seq - 999 WHERE seq > 1000", 5, /record 5 does not follow record 4/],
    ['two rows swapped', "UPDATE records SET seq = -7 WHERE seq = 7; UPDATE records SET seq = 7 WHERE seq = 8; UPDATE records SET seq = 8 WHERE seq = -7", 7, /record 7 does not follow record 6/],
    ['the tail cut off', 'DELETE FROM records WHERE seq > 8', 9, /older than its signed head: it ends at record 8 but 10 were written/],
    ['a record re-hashed without the key', "UPDATE records SET canonical_json = '{}', hash = '0000000000000000000000000000000000000000000000000000000000000000' WHERE seq = 10", 10, /record 10 (does not follow|was altered|has an HMAC)/],
  ])('fails verification naming where when %s (triggers dropped first)', (_what, sql, seq, problem) => {
    const dataDir = writeLog();
    tamper(dataDir, sql);
    const result = verify(dataDir);
    expect(result.intact).toBe(false);
    if (!result.intact) {
      expect(result.problem).toMatch(problem);
      expect(result.seq).toBe(seq);
    }
  });

  it('fails verification when only the triggers were dropped', () => {
    const dataDir = writeLog();
    tamper(dataDir, 'SELECT 1');
    expect(verify(dataDir)).toMatchObject({ intact: false, problem: 'the append-only triggers were dropped' });
  });

  it('`archon audit verify` exits 0 on an intact log and 1, naming the record, on a tampered one', () => {
    const dataDir = writeLog();
    const intact = runArchon(['audit', 'verify', '--data-dir', dataDir]);
    expect(intact.status).toBe(0);
    expect(intact.stdout).toContain('intact: 10 records');
    tamper(dataDir, "UPDATE records SET ts = '1999-01-01T00:00:00.000Z' WHERE seq = 2");
    const tampered = runArchon(['audit', 'verify', '--data-dir', dataDir]);
    expect(tampered.status).toBe(1);
    expect(tampered.stdout).toMatch(/TAMPERED: .*\(first bad record: 2\)/);
  });

  it('`archon audit verify` exits 1 when the file was truncated', () => {
    const dataDir = writeLog(400);
    const file = join(dataDir, AUDIT_DB_FILE);
    truncateSync(file, Math.floor(statSync(file).size / 2));
    const result = runArchon(['audit', 'verify', '--data-dir', dataDir]);
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/TAMPERED/);
  });

  it('verify says the log is behind (intact, not tampered) naming the first event of archon.db not yet recorded; the auditor catches up on it', () => {
    const dataDir = tempDir();
    Auditor.start(dataDir).close();
    const runId = unauditedRun(dataDir, 3);
    expect(verify(dataDir)).toEqual({ intact: true, records: 0, behind: { events: 3, detail: `run ${runId} from event 1` } });
    const auditor = Auditor.start(dataDir);
    expect(auditor.catchUp()).toBe(3);
    auditor.close();
    expect(verify(dataDir)).toEqual({ intact: true, records: 3 });
  });

  it('verify says the log is behind on an emergency stop of archon.db not yet recorded; the auditor catches up on it', () => {
    const dataDir = tempDir();
    Auditor.start(dataDir).close();
    const runtime = createRuntime({ dataDir });
    runtime.store.recordEstop('trigger', 'cli', 'test', new Date().toISOString());
    runtime.close();
    expect(verify(dataDir)).toEqual({ intact: true, records: 0, behind: { events: 1, detail: 'emergency stops from 1' } });
    const auditor = Auditor.start(dataDir);
    expect(auditor.catchUp()).toBe(1);
    auditor.close();
    expect(verify(dataDir)).toEqual({ intact: true, records: 1 });
  });

  it('refuses to start a chain over an archon.db with events when the log, its head and key are gone', () => {
    const dataDir = tempDir();
    unauditedRun(dataDir, 2);
    const auditor = Auditor.start(dataDir);
    expect(auditor.problem).toMatch(/archon\.db holds 2 events but this data dir has no audit chain/);
    expect(auditor.catchUp()).toBe(0);
    auditor.close();
    expect(runArchon(['audit', 'verify', '--data-dir', dataDir]).status).toBe(1);
  });

  it('`archon audit reset` sets aside a log that cannot even be opened and starts a new chain', () => {
    const dataDir = writeLog();
    writeFileSync(join(dataDir, AUDIT_DB_FILE), 'not a database at all, only text where the SQLite header should be');
    expect(runArchon(['audit', 'verify', '--data-dir', dataDir]).status).toBe(1);
    const reset = runArchon(['audit', 'reset', '--acknowledge', 'disk trouble', '--data-dir', dataDir]);
    expect(reset.status, reset.stderr).toBe(0);
    expect(reset.stdout).toMatch(/The old log is kept as audit\.db\.before-reset-/);
    expect(runArchon(['audit', 'verify', '--data-dir', dataDir]).stdout).toMatch(/intact: 1 records/);
  });

  it('an audit.db of an older Archon refuses runs until the reset sets it aside', () => {
    const dataDir = tempDir();
    const legacy = new Database(join(dataDir, AUDIT_DB_FILE));
    legacy.exec('CREATE TABLE records (seq INTEGER PRIMARY KEY, ts TEXT, run_id TEXT, type TEXT, canonical_json TEXT, prev_hash TEXT, hash TEXT, hmac TEXT)');
    legacy.prepare("INSERT INTO records VALUES (1, 't', 'r', 'run.started', '{}', 'p', 'h', 'm')").run();
    legacy.close();
    const refused = runArchon(['run', 'anything', '--data-dir', dataDir, '--model-url', 'http://127.0.0.1:9/v1']);
    expect(refused.status, refused.stderr).toBe(2);
    expect(refused.stderr).toMatch(/written by an older Archon.*archon audit reset --acknowledge/s);
    expect(runArchon(['audit', 'reset', '--acknowledge', 'upgrade', '--data-dir', dataDir]).status).toBe(0);
    expect(runArchon(['audit', 'verify', '--data-dir', dataDir]).status).toBe(0);
  });

  it('an anchor removed or lowered beside an anchored head: verify exits 1 naming it', () => {
    const dataDir = writeLog();
    const { anchorFile } = findAuditSecrets(dataDir);
    const anchor = readFileSync(anchorFile, 'utf8');
    writeFileSync(anchorFile, JSON.stringify({ ...(JSON.parse(anchor) as object), seq: 3 }));
    expect(verify(dataDir)).toMatchObject({ intact: false, problem: expect.stringMatching(/anchor of the log .* was altered/) });
    rmSync(anchorFile);
    expect(verify(dataDir)).toMatchObject({ intact: false, problem: expect.stringMatching(/anchor of the log .* was removed/) });
  });

  it('a log from before the anchor (its head unanchored, no anchor) is intact, and the auditor anchors it on start', () => {
    const dataDir = writeLog();
    const secrets = findAuditSecrets(dataDir);
    const head = JSON.parse(readFileSync(secrets.headFile, 'utf8')) as { seq: number; hash: string };
    const hmac = createHmac('sha256', secrets.key as Buffer).update(`${head.seq}:${head.hash}`).digest('hex');
    writeFileSync(secrets.headFile, JSON.stringify({ seq: head.seq, hash: head.hash, hmac }));
    rmSync(secrets.anchorFile);
    expect(verify(dataDir)).toEqual({ intact: true, records: 10 });
    Auditor.start(dataDir).close();
    expect(JSON.parse(readFileSync(secrets.anchorFile, 'utf8'))).toMatchObject({ seq: 10, hash: head.hash });
    expect(JSON.parse(readFileSync(secrets.headFile, 'utf8'))).toMatchObject({ seq: 10, anchored: true });
    expect(verify(dataDir)).toEqual({ intact: true, records: 10 });
  });

  it('`archon audit verify` exits 1 when the signed head was forged', () => {
    const dataDir = writeLog();
    const { headFile } = findAuditSecrets(dataDir);
    const head = JSON.parse(readFileSync(headFile, 'utf8')) as { seq: number };
    writeFileSync(headFile, JSON.stringify({ ...head, seq: 3 }));
    expect(runArchon(['audit', 'verify', '--data-dir', dataDir]).status).toBe(1);
  });
});
