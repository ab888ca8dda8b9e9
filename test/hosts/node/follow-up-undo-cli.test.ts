import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { planReply, requestText, startModelServer, type ScriptedModelServer } from '../../kit/scripted-model-server';
import { spawnArchon } from '../../support/archon-process';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function runIdOf(dataDir: string, goal: string): string {
  const db = new Database(join(dataDir, 'archon.db'), { readonly: true });
  try {
    return (db.prepare('SELECT id FROM runs WHERE goal = ?').get(goal) as { id: string }).id;
  } finally {
    db.close();
  }
}

describe('archon run --follow-up', () => {
  it("starts a new run whose plan request carries the earlier run's goal, plan and answer, and records followUpOf", async () => {
    const earlierAnswer = 'The capital of Atlantis is Poseidonia (population 12,345).';
    server = await startModelServer({
      reply: (request) => {
        if (request.purpose === 'plan') return planReply([{ id: 'look', description: 'look it up' }]);
        if (request.purpose === 'final') return { content: requestText(request).includes('Earlier run') ? 'Its population is 12,345.' : earlierAnswer };
        return { content: 'found it' };
      },
    });
    const dataDir = tempDir();
    const workspace = tempDir();
    const common = ['--model-url', server.url, '--data-dir', dataDir, '--workspace', workspace, '--approve', 'auto'];
    const first = await spawnArchon(['run', 'what is the capital of Atlantis?', ...common]).done;
    expect(first.status, first.stderr).toBe(0);
    const earlierId = runIdOf(dataDir, 'what is the capital of Atlantis?');

    const second = await spawnArchon(['run', 'and how many people live there?', '--follow-up', earlierId.slice(0, 8), ...common]).done;
    expect(second.status, second.stderr).toBe(0);
    const plans = server.chatRequests.filter((request) => request.purpose === 'plan').map(requestText);
    expect(plans).toHaveLength(2);
    expect(plans[0]).not.toContain('Earlier run');
    const followUpPlan = plans[1] ?? '';
    expect(followUpPlan).toContain('Earlier run');
    expect(followUpPlan).toContain('Goal: what is the capital of Atlantis?');
    expect(followUpPlan).toContain('- look: look it up');
    expect(followUpPlan).toContain(earlierAnswer);
    expect(followUpPlan.indexOf(earlierAnswer)).toBeLessThan(followUpPlan.indexOf('Goal: and how many people live there?'));

    const db = new Database(join(dataDir, 'archon.db'), { readonly: true });
    expect(db.prepare('SELECT follow_up_of FROM runs WHERE goal = ?').get('and how many people live there?')).toEqual({ follow_up_of: earlierId });
    db.close();
  });

  it('refuses a run id that names no run, starting nothing (exit 2)', async () => {
    const dataDir = tempDir();
    const result = await spawnArchon(['run', 'go on', '--follow-up', 'deadbeefdeadbeef', '--model-url', 'http://127.0.0.1:9/v1', '--data-dir', dataDir, '--workspace', tempDir()]).done;
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('There is no run deadbeefdeadbeef');
  });
});

describe('archon undo', () => {
  async function runWritingTwoFiles(workspace: string, dataDir: string): Promise<string> {
    const writes = [
      { path: 'notes.txt', content: 'rewritten by the run\n' },
      { path: 'new/created.txt', content: 'made by the run\n' },
    ];
    server = await startModelServer({
      reply: (request) => {
        if (request.purpose === 'plan') return planReply(writes.map((args, index) => ({ id: `w${index}`, description: `write ${args.path}`, tool: 'write_file', args, dependencies: index === 0 ? [] : ['w0'] })));
        if (request.purpose === 'final') return { content: 'wrote both' };
        return { content: 'done' };
      },
    });
    const result = await spawnArchon(['run', 'write two files', '--model-url', server.url, '--data-dir', dataDir, '--workspace', workspace, '--approve', 'auto']).done;
    expect(result.status, result.stderr).toBe(0);
    expect(readFileSync(join(workspace, 'notes.txt'), 'utf8')).toBe('rewritten by the run\n');
    expect(readFileSync(join(workspace, 'new/created.txt'), 'utf8')).toBe('made by the run\n');
    return runIdOf(dataDir, 'write two files');
  }

  it('restores an overwritten file and deletes a created one, showing the diff first (exit 0)', async () => {
    const workspace = tempDir();
    const dataDir = tempDir();
    writeFileSync(join(workspace, 'notes.txt'), 'the original notes\n');
    const runId = await runWritingTwoFiles(workspace, dataDir);

    const undo = await spawnArchon(['undo', runId, '--yes', '--data-dir', dataDir]).done;
    expect(undo.status, undo.stderr).toBe(0);
    expect(readFileSync(join(workspace, 'notes.txt'), 'utf8')).toBe('the original notes\n');
    expect(existsSync(join(workspace, 'new/created.txt'))).toBe(false);
    expect(undo.stdout).toContain('-rewritten by the run');
    expect(undo.stdout).toContain('+the original notes');
    expect(undo.stdout.indexOf('Delete new/created.txt')).toBeLessThan(undo.stdout.indexOf('Restore notes.txt'));

    const again = await spawnArchon(['undo', runId, '--yes', '--data-dir', dataDir]).done;
    expect(again.status).toBe(0);
    expect(again.stdout).toContain('no file changes left to undo');
  });

  it('leaves a file changed since the run as it is, reports it, reverts the rest (exit 1)', async () => {
    const workspace = tempDir();
    const dataDir = tempDir();
    writeFileSync(join(workspace, 'notes.txt'), 'the original notes\n');
    const runId = await runWritingTwoFiles(workspace, dataDir);
    writeFileSync(join(workspace, 'notes.txt'), 'edited by a person afterwards\n');

    const undo = await spawnArchon(['undo', runId.slice(0, 8), '--yes', '--data-dir', dataDir]).done;
    expect(undo.status).toBe(1);
    expect(readFileSync(join(workspace, 'notes.txt'), 'utf8')).toBe('edited by a person afterwards\n');
    expect(existsSync(join(workspace, 'new/created.txt'))).toBe(false);
    expect(undo.stdout).toContain('Not reverted: notes.txt: notes.txt was changed since the run wrote it');
  });

  it('without a terminal and without --yes, asks nobody and changes nothing', async () => {
    const workspace = tempDir();
    const dataDir = tempDir();
    writeFileSync(join(workspace, 'notes.txt'), 'the original notes\n');
    const runId = await runWritingTwoFiles(workspace, dataDir);
    const undo = await spawnArchon(['undo', runId, '--data-dir', dataDir]).done;
    expect(undo.status).toBe(2);
    expect(undo.stderr).toContain('pass --yes');
    expect(readFileSync(join(workspace, 'notes.txt'), 'utf8')).toBe('rewritten by the run\n');
  });
});
