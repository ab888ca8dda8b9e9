import { describe, expect, it } from 'vitest';
import { ArchonStore } from '../../../src/core/store/archon-store';
import type { MemoryItem } from '../../../src/shared/schemas/memory';
import { runArchon } from '../../support/archon-process';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();

/** A run in `/srv/ledger` and its fact, and an item the operator wrote, in a fresh data dir. */
function seeded(): { dataDir: string; fact: MemoryItem; preference: MemoryItem } {
  const dataDir = tempDir();
  const store = ArchonStore.open(dataDir);
  try {
    store.db.prepare("INSERT INTO runs (id, goal, status, policy, options_json, created_at, updated_at) VALUES ('run-ledger', 'g', 'completed', 'balanced', ?, 'now', 'now')").run(JSON.stringify({ workspace: '/srv/ledger' }));
    const fact = store.memory.add({ kind: 'fact', text: 'Invoices are filed under /srv/ledger/2026.', source: { runId: 'run-ledger', stepId: 's1' } });
    const preference = store.memory.add({ kind: 'preference', text: 'Answer in British English.' });
    return { dataDir, fact, preference };
  } finally {
    store.close();
  }
}

function listed(dataDir: string): (MemoryItem & { global: boolean })[] {
  const result = runArchon(['memory', 'list', '--json', '--data-dir', dataDir]);
  expect(result.status, result.stderr).toBe(0);
  return result.stdout.trim().split('\n').map((line) => JSON.parse(line) as MemoryItem);
}

describe('archon memory global / local', () => {
  it('makes a memory global or local by its id or a unique start of it, shown in `memory list` and its --json; an unknown id is exit 2', () => {
    const { dataDir, fact, preference } = seeded();
    expect(listed(dataDir).map((item) => [item.id, item.workspace, item.global])).toEqual([
      [preference.id, null, true],
      [fact.id, '/srv/ledger', false],
    ]);
    expect(runArchon(['memory', 'list', '--data-dir', dataDir]).stdout).toMatch(new RegExp(`^${preference.id}\\s+preference\\s+global\\s+operator`, 'm'));

    const global = runArchon(['memory', 'global', fact.id.slice(0, 5), '--data-dir', dataDir]);
    expect(global.status, global.stderr).toBe(0);
    expect(global.stdout).toBe(`Memory ${fact.id} is global: runs in every workspace recall it.\n`);
    expect(listed(dataDir).find((item) => item.id === fact.id)?.global).toBe(true);
    expect(runArchon(['memory', 'list', '--kind', 'fact', '--data-dir', dataDir]).stdout).toMatch(new RegExp(`^${fact.id}\\s+fact\\s+global\\s+run run-ledger step s1`));

    const local = runArchon(['memory', 'local', fact.id, '--data-dir', dataDir]);
    expect(local.stdout).toBe(`Memory ${fact.id} is recalled only by runs in /srv/ledger.\n`);
    expect(listed(dataDir).find((item) => item.id === fact.id)?.global).toBe(false);
    // The operator's own item has no workspace: local, no run recalls it, and the command says so.
    expect(runArchon(['memory', 'local', preference.id, '--data-dir', dataDir]).stdout).toContain('no run recalls it until you make it global again');

    for (const command of ['global', 'local']) {
      const unknown = runArchon(['memory', command, 'feedfacecafe', '--data-dir', dataDir]);
      expect(unknown.status).toBe(2);
      expect(unknown.stderr).toContain('There is no memory feedfacecafe. See `archon memory list`');
    }
  });
});
