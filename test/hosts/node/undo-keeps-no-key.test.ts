import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { planReply, startModelServer, type ScriptedModelServer } from '../../kit/scripted-model-server';
import { spawnArchon } from '../../support/archon-process';
import { useTempDirs } from '../../support/temp-dir';

/*
 * The red-team attack: the run's own key sits in a workspace `.env`; write_file overwrites it, and
 * the undo journal (`file_effects.previous`) kept the old content, the key in clear, in archon.db.
 */

const tempDir = useTempDirs();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const KEY = 'sk-run-key-4f9a2c7e1b83';

function dataDirBytes(dataDir: string): string {
  return ['archon.db', 'archon.db-wal']
    .map((file) => join(dataDir, file))
    .filter(existsSync)
    .map((file) => readFileSync(file).toString('latin1'))
    .join('');
}

describe('a write over a file that holds the run’s key', () => {
  it('archon.db never holds the key; undo says it cannot restore that file and why', async () => {
    server = await startModelServer({
      reply: (request) => {
        if (request.purpose === 'plan') return planReply([{ id: 'env', description: 'rewrite .env', tool: 'write_file', args: { path: '.env', content: 'DEBUG=0\n' } }]);
        if (request.purpose === 'final') return { content: 'rewrote .env' };
        return { content: 'done' };
      },
    });
    const workspace = tempDir();
    const dataDir = tempDir();
    writeFileSync(join(workspace, '.env'), `OPENAI_API_KEY=${KEY}\nDEBUG=1\n`);
    const result = await spawnArchon(['run', 'rewrite the env file', '--api-key', KEY, '--model-url', server.url, '--data-dir', dataDir, '--workspace', workspace, '--approve', 'auto']).done;
    expect(result.status, result.stderr).toBe(0);
    expect(readFileSync(join(workspace, '.env'), 'utf8')).toBe('DEBUG=0\n');
    expect(dataDirBytes(dataDir)).not.toContain(KEY);

    const db = new Database(join(dataDir, 'archon.db'), { readonly: true });
    const { id } = db.prepare('SELECT id FROM runs WHERE goal = ?').get('rewrite the env file') as { id: string };
    expect(db.prepare('SELECT previous FROM file_effects WHERE run_id = ?').get(id)).toEqual({ previous: null });
    db.close();

    const undo = await spawnArchon(['undo', id, '--yes', '--data-dir', dataDir]).done;
    expect(undo.status).toBe(1);
    expect(undo.stdout).toContain('Not reverted: .env: its previous content held a secret Archon knows (an API key or token), which is never stored, so this write cannot be undone');
    expect(readFileSync(join(workspace, '.env'), 'utf8')).toBe('DEBUG=0\n');
  });
});
