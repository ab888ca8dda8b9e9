import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RunEventSchema } from '../../../src/shared/schemas/events';
import { planReply, startModelServer, stepIdOf, type ScriptedModelServer, type ScriptedReply } from '../../kit/scripted-model-server';
import { spawnArchon } from '../../support/archon-process';
import { useTempDirs } from '../../support/temp-dir';

// Twenty processes on a loaded 2-core machine: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 900_000 });
const tempDir = useTempDirs();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const RUNS = 20;

/** Every run: a plan of two steps, the second after the first, each handed off and answered on the bus. */
function reply(request: { purpose: string | null }, stepId: string | null): ScriptedReply {
  if (request.purpose === 'plan') return planReply([{ id: 'gather', description: 'gather the facts' }, { id: 'report', description: 'report the facts', dependencies: ['gather'] }]);
  if (request.purpose === 'final') return { content: 'all reported' };
  return { content: `${stepId ?? 'step'} done` };
}

function rows<T>(dataDir: string, sql: string): T[] {
  const db = new Database(join(dataDir, 'archon.db'), { readonly: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

describe('many runs at once on one data dir', () => {
  it(`completes ${RUNS} runs started together on a fresh data dir, none told the database is locked, and the audit log verifies`, async () => {
    server = await startModelServer({ reply: (request) => reply(request, stepIdOf(request)) });
    const dataDir = tempDir();
    const flags = ['--model-url', server.url, '--data-dir', dataDir, '--approve', 'auto', '--json'];
    const runs = Array.from({ length: RUNS }, (_, index) => spawnArchon(['run', `job ${index}`, '--workspace', tempDir(), ...flags]).done);
    const results = await Promise.all(runs);

    const troubled = results.filter((result) => result.status !== 0 || /locked/i.test(result.stderr)).map((result) => `exit ${result.status}: ${result.stderr.trim()} ${result.stdout.trim().split('\n').at(-1) ?? ''}`);
    expect(troubled).toEqual([]);
    for (const result of results) {
      const last = RunEventSchema.parse(JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '{}'));
      expect(last).toMatchObject({ type: 'run.completed', answer: 'all reported' });
    }
    expect(rows(dataDir, "SELECT status, count(*) AS n FROM runs GROUP BY status")).toEqual([{ status: 'completed', n: RUNS }]);
    // Each run's hand-offs on the bus: the goal to the planner, then each step's task, each answered by a result.
    const handOffs = rows(dataDir, "SELECT t.to_agent AS agent, count(*) AS n FROM bus_messages t JOIN bus_messages r ON r.run_id = t.run_id AND r.correlation_id = t.id AND r.kind = 'result' WHERE t.kind = 'task' GROUP BY t.to_agent ORDER BY t.to_agent");
    expect(handOffs).toEqual([{ agent: 'executor:gather', n: RUNS }, { agent: 'executor:report', n: RUNS }, { agent: 'planner', n: RUNS }]);
    expect(rows(dataDir, "SELECT count(*) AS n FROM events WHERE type IN ('plan.revised', 'step.failed', 'run.stopped')")).toEqual([{ n: 0 }]);

    const verify = await spawnArchon(['audit', 'verify', '--data-dir', dataDir]).done;
    expect(verify.status, verify.stderr).toBe(0);
  });
});
