import { randomUUID } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { clusterSecret } from '../../../src/core/restate/restate-cluster';
import { signed } from '../../../src/core/restate/signed';
import { ScheduleStateSchema } from '../../../src/shared/schemas/run-order';
import { planReply, type RecordedRequest, type ScriptedReply } from '../../kit/scripted-model-server';
import { runArchon, spawnArchon } from '../../support/archon-process';
import { useModelServers } from '../../support/model-servers';
import { processesMatching } from '../../support/processes';
import { until, useRestate } from '../../support/restate';
import { useTempDirs } from '../../support/temp-dir';

// A Restate server, two workers and scheduled runs on a loaded 2-core machine: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 300_000 });
const tempDir = useTempDirs();
const serve = useModelServers();
const restate = useRestate();

/** One step: a command that waits for a file named `go`, then appends a mark. */
function waitForGo(marker: string): (request: RecordedRequest) => ScriptedReply {
  const command = `echo started >> starts.txt; until [ -e go ]; do sleep 0.1; done; echo mark >> ledger.txt # ${marker}`;
  return (request) => {
    if (request.purpose === 'plan') return planReply([{ id: 'mark', description: 'Append a mark to the ledger', expected_output: 'the command ran' }]);
    if (request.purpose === 'final') return { content: 'The mark is in the ledger.' };
    return request.body.messages?.at(-1)?.role === 'tool' ? { content: 'mark is in the ledger.' } : { toolCalls: [{ name: 'run_command', arguments: { command } }] };
  };
}

function runsIn(dataDir: string): { id: string; status: string }[] {
  if (!existsSync(join(dataDir, 'archon.db'))) return [];
  const db = new Database(join(dataDir, 'archon.db'), { readonly: true });
  try {
    return db.prepare('SELECT id, status FROM runs ORDER BY created_at').all() as { id: string; status: string }[];
  } finally {
    db.close();
  }
}

describe('archon estop on a Restate cluster', () => {
  it('ends a run a worker drives and its command, latches (no firing starts a run, no desk run starts), and --reset lets schedules start runs again', async () => {
    const cluster = await restate.server();
    const secretFile = restate.secretFile();
    const workspace = tempDir();
    const workerData = tempDir();
    await restate.balanced(cluster, { workspace, secretFile, dataDirs: [workerData, workerData] });
    const marker = `archon-estop-${randomUUID()}`;
    const model = await serve({ reply: waitForGo(marker) });
    const clusterFlags = ['--restate-ingress', cluster.ingress, '--restate-admin', cluster.admin];
    const flags = [...clusterFlags, '--cluster-secret-file', secretFile];
    const schedule = async (id: string, cron: string) => {
      const added = await spawnArchon(['schedule', 'add', 'append a mark to the ledger', '--cron', cron, '--id', id, '--approve', 'auto', '--model-url', model.url, '--json', ...flags]).done;
      expect(added.status, added.stderr).toBe(0);
      return ScheduleStateSchema.parse(JSON.parse(added.stdout));
    };
    const at = new Date(Date.now() + 12_000);
    await schedule('once', `${at.getSeconds()} ${at.getMinutes()} ${at.getHours()} * * *`);
    await until(() => processesMatching(marker).length > 0, 'the scheduled run to start its command', 120);

    const desk = tempDir();
    const stopped = await spawnArchon(['estop', '--reason', 'stop it all', '--data-dir', desk, ...flags]).done;
    expect(stopped.status, stopped.stderr).toBe(0);
    expect(stopped.stdout).toMatch(/Latched on the Restate cluster at .*: 1 run and tool calls under way there ended/);
    await until(() => runsIn(workerData).every((run) => run.status === 'stopped'), 'the run to end stopped');
    await until(() => processesMatching(marker).length === 0, 'its command to be killed');
    const [run] = runsIn(workerData);
    const db = new Database(join(workerData, 'archon.db'), { readonly: true });
    const estop = db.prepare("SELECT body_json FROM events WHERE run_id = ? AND type = 'estop.triggered'").all(run?.id) as { body_json: string }[];
    db.close();
    expect(estop.map((row) => JSON.parse(row.body_json) as { triggeredBy: string; reason: string })).toMatchObject([{ triggeredBy: 'cli', reason: 'stop it all' }]);

    // A re-arm made before this stop, sent again by someone who copied it: refused, the stop holds.
    const secret = clusterSecret(secretFile, workspace);
    const replayed = await fetch(`${cluster.ingress}/ArchonStop/cluster/set`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(signed(secret, 'ArchonStop/set', 'cluster', { state: { latched: false, since: null, triggeredBy: null, reason: null }, at: new Date(Date.now() - 60_000).toISOString() })) });
    expect(replayed.ok).toBe(false);
    expect(await replayed.text()).toMatch(/is not newer than the last stop or re-arm taken/);

    // Latched: a schedule's firing starts nothing (one every minute, the first a few seconds from now), and a desk's run on the cluster does not start.
    const soon = new Date(Date.now() + 10_000);
    const everyMinute = await schedule('every-minute', `${soon.getSeconds()} * * * * *`);
    await until(async () => {
      const listed = await spawnArchon(['schedule', 'list', '--json', ...clusterFlags]).done;
      const next = listed.stdout.split('\n').filter(Boolean).map((line) => ScheduleStateSchema.parse(JSON.parse(line))).find((state) => state.id === 'every-minute')?.next;
      return next !== undefined && Date.parse(next) > Date.parse(everyMinute.next);
    }, 'the schedule to have fired once', 150);
    expect(runsIn(workerData)).toHaveLength(1);
    const refused = await spawnArchon(['run', 'append a mark', '--engine', 'restate', '--model-url', model.url, '--data-dir', tempDir(), '--workspace', tempDir(), '--approve', 'auto', ...flags]).done;
    expect(refused.status).toBe(3);
    expect(refused.stderr).toMatch(/Emergency stop latched on the Restate cluster at .*Re-arm it with `archon estop --reset`/);

    writeFileSync(join(workspace, 'go'), '');
    const rearmed = await spawnArchon(['estop', '--reset', '--data-dir', desk, ...flags]).done;
    expect(rearmed.status, rearmed.stderr).toBe(0);
    expect(rearmed.stdout).toMatch(/Re-armed the Restate cluster/);
    // Re-armed, firings start runs again: one a few seconds from now starts a run that completes.
    const removed = await spawnArchon(['schedule', 'rm', 'every-minute', ...flags]).done;
    expect(removed.status, removed.stderr).toBe(0);
    const again = new Date(Date.now() + 10_000);
    await schedule('after-rearm', `${again.getSeconds()} ${again.getMinutes()} ${again.getHours()} * * *`);
    await until(() => runsIn(workerData).some((entry) => entry.status === 'completed'), 'a firing after the re-arm to start a run that completes', 150);
    expect(runsIn(workerData)[0]?.status).toBe('stopped');
  });

  it('stops the data dir even when the cluster cannot be reached or its secret is not given, and says which', async () => {
    const desk = tempDir();
    const unreachable = runArchon(['estop', '--data-dir', desk, '--restate-ingress', 'http://127.0.0.1:9', '--restate-admin', 'http://127.0.0.1:9', '--cluster-secret-file', restate.secretFile()]);
    expect(unreachable.stdout).toMatch(/Emergency stop latched at/);
    expect(unreachable.status).toBe(1);
    expect(unreachable.stderr).toMatch(/the Restate cluster at http:\/\/127\.0\.0\.1:9 was not stopped: .*Try again once it answers/);
    const noSecret = runArchon(['estop', '--reset', '--data-dir', desk, '--restate-ingress', 'http://127.0.0.1:9']);
    expect(noSecret.stdout).toMatch(/Re-armed/);
    expect(noSecret.status).toBe(2);
    expect(noSecret.stderr).toMatch(/Re-armed here only: the Restate cluster needs --cluster-secret-file/);
  });
});
