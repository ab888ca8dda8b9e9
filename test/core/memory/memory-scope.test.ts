import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ArchonStore } from '../../../src/core/store/archon-store';
import { MIGRATIONS } from '../../../src/core/store/migrations';
import { openDatabase, type SqliteDatabase } from '../../../src/core/store/open-database';
import { dispatchCommand } from '../../../src/shared/ipc/dispatch';
import { useServices } from '../../support/runtime';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
const openServices = useServices();

/** Runs as a database of any schema version holds them: a pinned real path wins over the path the run was given. */
function insertRuns(db: SqliteDatabase, runs: Record<string, { workspace: string; real?: string }>): void {
  const insert = db.prepare("INSERT INTO runs (id, goal, status, policy, options_json, created_at, updated_at) VALUES (?, 'g', 'completed', 'balanced', ?, 'now', 'now')");
  const pin = db.prepare('UPDATE runs SET workspace_real = ? WHERE id = ?');
  for (const [id, run] of Object.entries(runs)) {
    insert.run(id, JSON.stringify({ workspace: run.workspace }));
    if (run.real) pin.run(run.real, id);
  }
}

const RUNS = { 'run-a1': { workspace: '/link/a', real: '/srv/a' }, 'run-a2': { workspace: '/srv/a' }, 'run-b1': { workspace: '/srv/b' }, 'now-a': { workspace: '/srv/a' }, 'now-b': { workspace: '/srv/b' } };

function withStore(use: (store: ArchonStore) => void): void {
  const store = ArchonStore.open(tempDir());
  try {
    insertRuns(store.db, RUNS);
    use(store);
  } finally {
    store.close();
  }
}

describe("memory's scope: its workspace, or global", () => {
  it("recalls a run's own workspace's items and global ones; a lesson of mixed workspaces nowhere until made global; the operator's items are global unless made local", () => {
    withStore((store) => {
      const fact = store.memory.add({ kind: 'fact', text: 'kestrel nest in the north tower', source: { runId: 'run-a1', stepId: 's1' } });
      const preference = store.memory.add({ kind: 'preference', text: 'kestrel photos in colour' });
      const lessonA = store.memory.add({ kind: 'lesson', text: 'kestrel counts need two passes', source: { runId: 'run-a1', stepId: null }, evidence: ['run-a1', 'run-a2'] });
      const mixed = store.memory.add({ kind: 'lesson', text: 'kestrel surveys start at dawn', source: { runId: 'run-a1', stepId: null }, evidence: ['run-a1', 'run-b1'] });
      const unknown = store.memory.add({ kind: 'fact', text: 'kestrel ringing codes', source: { runId: 'run-gone', stepId: 's1' } });
      expect([fact, preference, lessonA, mixed, unknown].map((item) => [item.workspace, item.global])).toEqual([
        ['/srv/a', false],
        [null, true],
        ['/srv/a', false],
        [null, false],
        [null, false],
      ]);
      const recalled = (runId: string) => store.memory.search('kestrel', { limit: 10, workspaceOfRun: runId }).map((entry) => entry.item.id).sort();
      expect(recalled('now-a')).toEqual([fact.id, preference.id, lessonA.id].sort());
      expect(recalled('now-b')).toEqual([preference.id]);

      expect(store.memory.setGlobal(mixed.id.slice(0, 5), true).global).toBe(true);
      expect(store.memory.setGlobal(unknown.id, true).global).toBe(true);
      expect(store.memory.setGlobal(preference.id, false).global).toBe(false);
      expect(recalled('now-a')).toEqual([fact.id, lessonA.id, mixed.id, unknown.id].sort());
      expect(recalled('now-b')).toEqual([mixed.id, unknown.id].sort());
      expect(() => store.memory.setGlobal('feedfacecafe', true)).toThrow(/There is no memory feedfacecafe/);
    });
  });

  it('an item whose run is no longer known is not recalled, though its workspace is kept, unless it is global', () => {
    withStore((store) => {
      const fact = store.memory.add({ kind: 'fact', text: 'kestrel nest in the north tower', source: { runId: 'run-a2', stepId: 's1' } });
      store.db.prepare("DELETE FROM runs WHERE id = 'run-a2'").run();
      expect(store.memory.get(fact.id)?.workspace).toBe('/srv/a');
      expect(store.memory.search('kestrel', { limit: 10, workspaceOfRun: 'now-a' })).toEqual([]);
      store.memory.setGlobal(fact.id, true);
      expect(store.memory.search('kestrel', { limit: 10, workspaceOfRun: 'now-b' }).map((entry) => entry.item.id)).toEqual([fact.id]);
    });
  });

  it("keeps a run's accepted step facts once, however often its ending is recorded", () => {
    withStore((store) => {
      const facts = [{ stepId: 's1', text: 'count\nResult: 412 crates' }, { stepId: 's2', text: 'report\nResult: reported' }];
      const first = store.memory.putStepFacts('run-a1', facts);
      store.memory.pin(first[0]?.id ?? '', true);
      const again = store.memory.putStepFacts('run-a1', facts);
      expect(again.map((item) => item.id)).toEqual(first.map((item) => item.id));
      expect(store.memory.list({ kind: 'fact', limit: 10 })).toHaveLength(2);
      expect(store.memory.get(first[0]?.id ?? '')?.pinned).toBe(true);
      expect(again.every((item) => item.workspace === '/srv/a')).toBe(true);
    });
  });
});

describe('memory.update over the contract', () => {
  it('makes an item global and local again by its id or a unique start of it; an unknown id is NOT_FOUND', async () => {
    const { runtime, services } = openServices();
    const call = (input: unknown) => dispatchCommand(services.handlers, 'memory.update', input, { signal: new AbortController().signal });
    insertRuns(runtime.store.db, { 'run-a1': { workspace: '/srv/a' } });
    const fact = runtime.store.memory.add({ kind: 'fact', text: 'The ledger sits in the blue folder.', source: { runId: 'run-a1', stepId: 's1' } });
    expect(await call({ id: fact.id.slice(0, 6), global: true })).toMatchObject({ ok: true, value: { id: fact.id, global: true, workspace: '/srv/a' } });
    expect(runtime.store.memory.get(fact.id)?.global).toBe(true);
    expect(await call({ id: fact.id, global: false })).toMatchObject({ ok: true, value: { global: false } });
    expect(runtime.store.memory.get(fact.id)?.global).toBe(false);
    expect(await call({ id: 'feedfacecafe', global: true })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    expect(await call({ id: fact.id, global: 'yes' })).toMatchObject({ ok: false, error: { code: 'VALIDATION_FAILED' } });
  });
});

describe('the migration that gives memory its scope', () => {
  it("gives an existing database's items the workspace of their runs, keeps its lessons and the operator's own items global, and scopes lessons stored after it", () => {
    const dataDir = tempDir();
    const before = MIGRATIONS.findIndex((migration) => migration.name.startsWith("each memory's workspace"));
    expect(before).toBeGreaterThan(0);
    const old = openDatabase(join(dataDir, 'archon.db'), { migrations: MIGRATIONS.slice(0, before) });
    insertRuns(old, RUNS);
    const insert = old.prepare("INSERT INTO memory_items (id, kind, text, source_run_id, source_step_id, evidence_json, created_at, pinned) VALUES (?, ?, ?, ?, ?, ?, 'now', 0)");
    insert.run('fact-a1', 'fact', 'a fact', 'run-a1', 's1', '[]');
    insert.run('fact-b1', 'fact', 'b fact', 'run-b1', 's1', '[]');
    insert.run('lesson-a', 'lesson', 'a lesson', 'run-a1', null, '["run-a1","run-a2"]');
    insert.run('lesson-mixed', 'lesson', 'mixed lesson', 'run-a1', null, '["run-a1","run-b1"]');
    insert.run('fact-gone', 'fact', 'gone fact', 'run-gone', 's1', '[]');
    insert.run('summary-a', 'fact', 'summary', null, null, '["run-a2"]');
    insert.run('preference', 'preference', 'a preference', null, null, '[]');
    old.close();

    const store = ArchonStore.open(dataDir);
    try {
      const scope = (id: string) => {
        const item = store.memory.get(id);
        return [item?.workspace, item?.global];
      };
      expect(scope('fact-a1')).toEqual(['/srv/a', false]);
      expect(scope('fact-b1')).toEqual(['/srv/b', false]);
      expect(scope('lesson-a')).toEqual(['/srv/a', true]);
      expect(scope('lesson-mixed')).toEqual([null, true]);
      expect(scope('fact-gone')).toEqual([null, false]);
      expect(scope('summary-a')).toEqual(['/srv/a', false]);
      expect(scope('preference')).toEqual([null, true]);

      const recalled = (runId: string, query: string) => store.memory.search(query, { limit: 10, workspaceOfRun: runId }).map((entry) => entry.item.id).sort();
      expect(recalled('now-b', 'lesson')).toEqual(['lesson-a', 'lesson-mixed']);
      const mixedNow = store.memory.add({ kind: 'lesson', text: 'a newer mixed lesson', source: { runId: 'run-a1', stepId: null }, evidence: ['run-a1', 'run-b1'] });
      expect([mixedNow.workspace, mixedNow.global]).toEqual([null, false]);
      expect(recalled('now-a', 'lesson')).toEqual(['lesson-a', 'lesson-mixed']);
    } finally {
      store.close();
    }
  });
});
