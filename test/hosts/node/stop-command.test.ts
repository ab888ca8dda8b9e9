import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RunEventSchema, type RunEvent } from '../../../src/shared/schemas/events';
import { planReply, requestText, startModelServer, type ScriptedModelServer, type ScriptedReply } from '../../kit/scripted-model-server';
import { spawnArchon } from '../../support/archon-process';
import { useTempDirs } from '../../support/temp-dir';

// Two runs and a stop as processes on a loaded 2-core machine: the bound is against hangs, not a speed target.
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

/** Waits (bounded) for a file named "gate" in the workspace, so the run is still going when the other one is stopped. */
const GATE_LOOP = 'for i in $(seq 3000); do [ -f gate ] && exit 0; sleep 0.1; done; exit 1';

function query<T>(dataDir: string, sql: string, ...params: unknown[]): T[] {
  const db = new Database(join(dataDir, 'archon.db'), { readonly: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

describe('archon stop RUN_ID', () => {
  it('ends that one run stopped (exit 3, run.stopped naming the operator) by its short id, while another run on the data dir goes on and completes', async () => {
    server = await startModelServer({
      reply: (request): ScriptedReply => {
        const thinker = requestText(request).includes('think forever');
        if (request.purpose === 'plan') {
          return thinker ? planReply([{ id: 'think', description: 'think forever' }]) : planReply([{ id: 'wait', description: 'wait for the gate', tool: 'run_command', args: { command: GATE_LOOP } }]);
        }
        if (request.purpose === 'final') return { content: 'the gate opened' };
        return thinker ? { hang: true } : { content: 'waited' };
      },
    });
    const dataDir = tempDir();
    const gated = tempDir();
    const flags = ['--model-url', server.url, '--data-dir', dataDir, '--approve', 'auto', '--json'];
    // One after the other, so the two processes do not race to create the fresh data dir.
    const thinking = spawnArchon(['run', 'think forever', '--workspace', tempDir(), ...flags]);
    await expect.poll(() => query(dataDir, "SELECT run_id FROM events WHERE type = 'step.started'").length, { timeout: 180_000, interval: 250 }).toBe(1);
    const waiting = spawnArchon(['run', 'wait for the gate', '--workspace', gated, ...flags]);
    await expect.poll(() => query(dataDir, "SELECT run_id FROM events WHERE type = 'tool.started'").length, { timeout: 180_000, interval: 250 }).toBe(1);
    const [thinker] = query<{ id: string }>(dataDir, "SELECT id FROM runs WHERE goal = 'think forever'");
    const runId = thinker?.id as string;

    const stop = await spawnArchon(['stop', runId.slice(0, 8), '--data-dir', dataDir]).done;
    expect(stop.status, stop.stderr).toBe(0);
    expect(stop.stdout).toContain(`Run ${runId} ended stopped`);
    const stopped = await thinking.done;
    expect(stopped.status, stopped.stderr).toBe(3);
    const trail = events(stopped.stdout);
    expect(trail.at(-1)).toMatchObject({ type: 'run.stopped', reason: expect.stringMatching(/Stopped by the operator \(archon stop\)/) });
    expect(trail.some((event) => event.type === 'estop.triggered')).toBe(false);
    expect(query(dataDir, "SELECT status FROM runs WHERE goal = 'wait for the gate'")).toEqual([{ status: 'running' }]);

    writeFileSync(join(gated, 'gate'), '');
    const completed = await waiting.done;
    expect(completed.status, completed.stderr).toBe(0);
    expect(events(completed.stdout).at(-1)).toMatchObject({ type: 'run.completed' });

    const again = await spawnArchon(['stop', runId, '--data-dir', dataDir]).done;
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/is not running \(stopped/);
    const unknown = await spawnArchon(['stop', 'no-such-run', '--data-dir', dataDir]).done;
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/There is no run no-such-run/);
  });
});
