import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RunEventSchema, type RunEvent } from '../../../src/shared/schemas/events';
import { planReply, startModelServer, stepIdOf, type ScriptedModelServer, type ScriptedReply } from '../../kit/scripted-model-server';
import { spawnArchon } from '../../support/archon-process';
import { useTempDirs } from '../../support/temp-dir';

// A run, a pause and a resume as processes on a loaded 2-core machine: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 240_000 });
const tempDir = useTempDirs();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const events = (stdout: string): RunEvent[] =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => RunEventSchema.parse(JSON.parse(line)));

/** Waits (bounded) for a file named "gate" in the workspace, so the run is in a tool call when it is paused. */
const GATE_LOOP = 'for i in $(seq 3000); do [ -f gate ] && exit 0; sleep 0.1; done; exit 1';

function query<T>(dataDir: string, sql: string): T[] {
  const db = new Database(join(dataDir, 'archon.db'), { readonly: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

describe('archon pause RUN_ID', () => {
  it('ends a running run paused (exit 6, run.paused naming the operator); archon resume completes it without redoing the completed step, the interrupted command a stated gap', async () => {
    server = await startModelServer({
      reply: (request): ScriptedReply => {
        if (request.purpose === 'plan') {
          return planReply([
            { id: 'first', description: 'write the note' },
            { id: 'wait', description: 'wait for the gate', dependencies: ['first'], tool: 'run_command', args: { command: GATE_LOOP } },
          ]);
        }
        if (request.purpose === 'final') return { content: 'the gate opened' };
        return { content: stepIdOf(request) === 'first' ? 'noted' : 'waited' };
      },
    });
    const dataDir = tempDir();
    const workspace = tempDir();
    const flags = ['--model-url', server.url, '--data-dir', dataDir, '--workspace', workspace, '--approve', 'auto', '--json'];
    const running = spawnArchon(['run', 'note, then wait for the gate', ...flags]);
    await expect.poll(() => query(dataDir, "SELECT run_id FROM events WHERE type = 'tool.started'").length, { timeout: 180_000, interval: 250 }).toBe(1);
    const [run] = query<{ id: string }>(dataDir, 'SELECT id FROM runs');
    const runId = run?.id as string;

    const pause = await spawnArchon(['pause', runId.slice(0, 8), '--data-dir', dataDir]).done;
    expect(pause.status, pause.stderr).toBe(0);
    expect(pause.stdout).toContain(`Run ${runId} ended paused`);
    const paused = await running.done;
    expect(paused.status, paused.stderr).toBe(6);
    expect(events(paused.stdout).at(-1)).toMatchObject({ type: 'run.paused', reason: expect.stringMatching(/Paused by the operator \(archon pause\)/) });
    const firstCalls = server.chatRequests.filter((request) => request.purpose === 'step' && stepIdOf(request) === 'first').length;
    expect(firstCalls).toBeGreaterThan(0);

    writeFileSync(join(workspace, 'gate'), '');
    // The paused command may or may not have done its work, and --approve auto does not repeat it: a gap the operator accepts, never a plain success.
    const resumed = await spawnArchon(['resume', runId, ...flags, '--accept-gaps']).done;
    expect(resumed.status, resumed.stderr).toBe(7);
    expect(events(resumed.stdout).at(-1)).toMatchObject({ type: 'run.completed', answer: 'the gate opened', gaps: [expect.stringContaining('run_command in step wait may or may not have happened')] });
    expect(server.chatRequests.filter((request) => request.purpose === 'step' && stepIdOf(request) === 'first')).toHaveLength(firstCalls);
    expect(query(dataDir, `SELECT run_id FROM events WHERE type = 'step.started' AND body_json LIKE '%"stepId":"first"%'`)).toHaveLength(1);
  });
});
