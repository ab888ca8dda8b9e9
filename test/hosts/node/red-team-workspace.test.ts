import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { confirmWorkspace, holdWorkspace, pinWorkspace } from '../../../src/core/tools/workspace-pin';
import { terminalConfirmation } from '../../../src/hosts/node/terminal-confirmation';
import { RunOptionsSchema } from '../../../src/shared/schemas/run';
import { planReply, startModelServer, type ScriptedModelServer } from '../../kit/scripted-model-server';
import { spawnArchon } from '../../support/archon-process';
import { useRuntimes } from '../../support/runtime';
import { useTempDirs } from '../../support/temp-dir';

/*
 * Red team: a run's workspace is a path. Started in a sub-folder, the run is interrupted; another
 * run's approved command then swaps that folder for a link to a folder outside. Resume and undo must
 * not follow the link: the folder confirmed when the run started is pinned (device and inode).
 */

// Runs, a pause and a resume as processes on a loaded machine: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 240_000 });
const tempDir = useTempDirs();
const openRuntime = useRuntimes();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Waits (bounded) for a file named "gate" in the workspace, so the run is in a tool call when it is paused. */
const GATE_LOOP = 'for i in $(seq 3000); do [ -f gate ] && exit 0; sleep 0.1; done; exit 1';
const OUTSIDE_SECRET = 'OUTSIDE-SECRET-51c2';

function query<T>(dataDir: string, sql: string): T[] {
  const db = new Database(join(dataDir, 'archon.db'), { readonly: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

/** A project with the run's sub-folder, and a folder outside it holding a secret. */
function layout() {
  const project = tempDir();
  const sub = join(project, 'sub');
  mkdirSync(sub);
  const outside = tempDir();
  writeFileSync(join(outside, 'secret.txt'), OUTSIDE_SECRET);
  return { project, sub, outside, dataDir: tempDir() };
}

/** What another run's approved command could do: the sub-folder moved aside, a link to outside in its place. */
function swapForLink(sub: string, outside: string): void {
  renameSync(sub, `${sub}-moved`);
  symlinkSync(outside, sub);
}

describe('red team: resume and undo after the workspace was swapped for a link', () => {
  it('archon resume is refused (exit 2, saying what changed and what to do); nothing outside is read or written', async () => {
    const { sub, outside, dataDir } = layout();
    server = await startModelServer({
      reply: (request) => {
        if (request.purpose !== 'plan') return { content: 'done' };
        return planReply([
          { id: 'wait', description: 'wait for the gate', tool: 'run_command', args: { command: GATE_LOOP } },
          { id: 'peek', description: 'read the secret', dependencies: ['wait'], tool: 'read_file', args: { path: 'secret.txt' } },
          { id: 'write', description: 'write a file', dependencies: ['wait'], tool: 'write_file', args: { path: 'after.txt', content: 'written on resume' } },
        ]);
      },
    });
    const flags = ['--model-url', server.url, '--data-dir', dataDir, '--approve', 'auto', '--policy', 'permissive', '--json'];
    const running = spawnArchon(['run', 'wait, then read and write', '--workspace', sub, ...flags]);
    await expect.poll(() => query(dataDir, "SELECT run_id FROM events WHERE type = 'tool.started'").length, { timeout: 180_000, interval: 250 }).toBe(1);
    const [run] = query<{ id: string }>(dataDir, 'SELECT id FROM runs');
    const runId = run?.id as string;
    expect((await spawnArchon(['pause', runId, '--data-dir', dataDir]).done).status).toBe(0);
    expect((await running.done).status).toBe(6);

    swapForLink(sub, outside);
    writeFileSync(join(outside, 'gate'), '');
    const resumed = await spawnArchon(['resume', runId, ...flags]).done;
    expect(resumed.status, resumed.stderr).toBe(2);
    expect(resumed.stderr).toContain(`Run ${runId} was not resumed: its workspace ${sub} was ${sub} (device`);
    expect(resumed.stderr).toContain(`and is now ${outside} (device`);
    expect(resumed.stderr).toMatch(/Put that folder back .* at a terminal and confirm it/);
    expect(readdirSync(outside).sort()).toEqual(['gate', 'secret.txt']);
    expect(resumed.stdout).not.toContain(OUTSIDE_SECRET);
    expect(query(dataDir, "SELECT run_id FROM events WHERE type = 'tool.started'")).toHaveLength(1);
  });

  it('archon undo --yes is refused (exit 2); the files outside the run wrote nothing to stay as they are', async () => {
    const { sub, outside, dataDir } = layout();
    writeFileSync(join(sub, 'notes.txt'), 'the original notes\n');
    server = await startModelServer({
      reply: (request) =>
        request.purpose === 'plan'
          ? planReply([
              { id: 'w0', description: 'rewrite the notes', tool: 'write_file', args: { path: 'notes.txt', content: 'rewritten by the run\n' } },
              { id: 'w1', description: 'make a file', dependencies: ['w0'], tool: 'write_file', args: { path: 'new/created.txt', content: 'made by the run\n' } },
            ])
          : { content: 'done' },
    });
    const ran = await spawnArchon(['run', 'write two files', '--model-url', server.url, '--data-dir', dataDir, '--workspace', sub, '--approve', 'auto']).done;
    expect(ran.status, ran.stderr).toBe(0);
    const [run] = query<{ id: string }>(dataDir, 'SELECT id FROM runs');

    swapForLink(sub, outside);
    // Outside, files just as the run left its own: undo would find them unchanged since, and revert them.
    writeFileSync(join(outside, 'notes.txt'), 'rewritten by the run\n');
    mkdirSync(join(outside, 'new'));
    writeFileSync(join(outside, 'new', 'created.txt'), 'made by the run\n');
    const undo = await spawnArchon(['undo', run?.id as string, '--yes', '--data-dir', dataDir]).done;
    expect(undo.status, undo.stderr).toBe(2);
    expect(undo.stderr).toContain('was not undone: its workspace');
    expect(readFileSync(join(outside, 'notes.txt'), 'utf8')).toBe('rewritten by the run\n');
    expect(existsSync(join(outside, 'new', 'created.txt'))).toBe(true);
    expect(readFileSync(join(`${sub}-moved`, 'notes.txt'), 'utf8')).toBe('rewritten by the run\n');
  });
});

describe('a swapped workspace put to the operator at a terminal', () => {
  /** A terminal that answers the question once it is shown. */
  function answering(reply: string) {
    const input = Object.assign(new PassThrough(), { isTTY: true });
    const output = new PassThrough();
    let shown = '';
    output.on('data', (chunk: Buffer) => {
      shown += chunk.toString('utf8');
      if (shown.includes('Allow? [y/N]')) input.write(`${reply}\n`);
    });
    return { confirmation: terminalConfirmation({ trustUi: false, input, output }), shown: () => shown };
  }

  it('a no (or no answer) refuses it; a yes pins the folder there now, which resume and undo then take', async () => {
    const { sub, outside } = layout();
    const runs = openRuntime().store.runs;
    const options = RunOptionsSchema.parse({ modelUrl: 'http://127.0.0.1:9/v1', model: 'm', policy: 'balanced', concurrency: null, maxTokens: null, maxCostUsd: null, workspace: sub, maxIterations: 10 });
    runs.createRun({ id: 'swapped', goal: 'g', policy: 'balanced', options, now: new Date().toISOString() });
    pinWorkspace(runs, 'swapped', sub);
    swapForLink(sub, outside);

    const no = answering('n');
    await expect(confirmWorkspace(runs, 'swapped', 'resume', no.confirmation, new AbortController().signal)).rejects.toMatchObject({ code: 'NOT_CONFIRMED' });
    expect(no.shown()).toContain(`and is now ${outside} (device`);
    expect(() => holdWorkspace(runs, 'swapped', sub, 'undo')).toThrow(/was not undone/);

    await confirmWorkspace(runs, 'swapped', 'resume', answering('y').confirmation, new AbortController().signal);
    expect(runs.workspacePin('swapped')?.realPath).toBe(outside);
    expect(() => holdWorkspace(runs, 'swapped', sub, 'undo')).not.toThrow();
  });
});

describe('red team: --workspace naming the data dir', () => {
  it('the data dir, or a folder inside it, is refused (exit 2) before anything starts', async () => {
    const dataDir = tempDir();
    mkdirSync(join(dataDir, 'inside'));
    for (const workspace of [dataDir, join(dataDir, 'inside')]) {
      const result = await spawnArchon(['run', 'look around', '--model-url', 'http://127.0.0.1:9/v1', '--data-dir', dataDir, '--workspace', workspace]).done;
      expect(result.status, result.stderr).toBe(2);
      expect(result.stderr).toContain(`The workspace ${workspace} is Archon's data dir (${dataDir}) or inside it, which tools must never see. Choose another folder with --workspace.`);
      expect(query(dataDir, 'SELECT id FROM runs')).toEqual([]);
    }
  });

  it('a workspace holding the data dir is fine: the data dir is hidden in it', async () => {
    const workspace = tempDir();
    server = await startModelServer({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'look', description: 'look' }]) : { content: 'done' }) });
    const result = await spawnArchon(['run', 'look around', '--model-url', server.url, '--data-dir', join(workspace, '.archon'), '--workspace', workspace, '--approve', 'auto']).done;
    expect(result.status, result.stderr).toBe(0);
  });
});
