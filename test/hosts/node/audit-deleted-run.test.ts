import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { AUDIT_DB_FILE } from '../../../src/auditor/audit-log';
import { planReply, startModelServer, type ScriptedModelServer } from '../../kit/scripted-model-server';
import { spawnArchon, useServe, type ServeProcess } from '../../support/archon-process';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
const startServe = useServe();
let server: ScriptedModelServer;
beforeAll(async () => {
  server = await startModelServer({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'a', description: 'think' }]) : { content: 'done' }) });
});
afterAll(() => server.close());

const archon = (args: string[]) => spawnArchon(args).done;
const run = (dataDir: string) => archon(['run', 'think once', '--model-url', server.url, '--data-dir', dataDir, '--workspace', tempDir(), '--approve', 'auto']);
const verify = (dataDir: string) => archon(['audit', 'verify', '--data-dir', dataDir]);

function query<T>(dataDir: string, file: string, sql: string, ...params: unknown[]): T[] {
  const db = new Database(join(dataDir, file), { readonly: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

async function twoRuns(dataDir: string): Promise<string> {
  expect((await run(dataDir)).status).toBe(0);
  expect((await run(dataDir)).status).toBe(0);
  const [, second] = query<{ id: string }>(dataDir, 'archon.db', 'SELECT id FROM runs ORDER BY created_at, rowid');
  return second?.id as string;
}

/** Sends one command to `archon serve` over its WebSocket and returns the answer. */
async function command(serve: ServeProcess, name: string, input: unknown): Promise<{ ok: boolean; error?: { message: string } }> {
  const ws = new WebSocket(`ws://127.0.0.1:${serve.url.port}/ws`, ['archon', `archon-token.${serve.token}`], { origin: serve.origin });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  try {
    return await new Promise((resolve) => {
      ws.on('message', (data) => {
        const frame = JSON.parse(String(data)) as { id?: number; result?: { ok: boolean } };
        if (frame.id === 1 && frame.result) resolve(frame.result);
      });
      ws.send(JSON.stringify({ id: 1, command: name, input }));
    });
  } finally {
    ws.close();
  }
}

// Several real `archon` processes one after another: slow on a shared 2-core machine.
describe('a run gone from archon.db', { timeout: 180_000 }, () => {
  it('its rows deleted behind Archon\'s back: verify exits 1 naming the run, whose records the log still holds', async () => {
    const dataDir = tempDir();
    const runB = await twoRuns(dataDir);
    const db = new Database(join(dataDir, 'archon.db'));
    db.pragma('foreign_keys = ON');
    db.prepare('DELETE FROM runs WHERE id = ?').run(runB);
    db.close();

    const verdict = await verify(dataDir);
    expect(verdict.status).toBe(1);
    expect(verdict.stdout).toMatch(new RegExp(`archon\\.db no longer holds events the log recorded, and Archon recorded no deletion of them: run ${runB} \\(all \\d+ events\\)`));
    expect(query(dataDir, AUDIT_DB_FILE, 'SELECT seq FROM records WHERE run_id = ?', runB).length).toBeGreaterThan(0);
  });

  it('deleted by Archon (`runs.delete`): the log records the deletion and verify stays intact', async () => {
    const dataDir = tempDir();
    const runB = await twoRuns(dataDir);
    const serve = await startServe(dataDir, ['--model-url', server.url, '--workspace', tempDir()]);
    expect(await command(serve, 'runs.delete', { runId: runB })).toMatchObject({ ok: true });
    const stopped = new Promise((resolve) => serve.child.once('exit', resolve));
    serve.child.kill('SIGTERM');
    await stopped;

    const deletion = query<{ canonical_json: string }>(dataDir, AUDIT_DB_FILE, "SELECT canonical_json FROM records WHERE type = 'run.deleted' AND run_id = ?", runB);
    expect(deletion.map((record) => JSON.parse(record.canonical_json) as unknown)).toEqual([expect.objectContaining({ runId: runB, lastSeq: expect.any(Number) })]);
    const verdict = await verify(dataDir);
    expect(verdict.stdout).toMatch(/^Audit log intact/);
    expect(verdict.status).toBe(0);
  });
});
