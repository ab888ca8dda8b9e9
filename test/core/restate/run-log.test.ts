import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { clusterSecret, RestateCluster } from '../../../src/core/restate/restate-cluster';
import { holdRun, readHeldRun, stopHeldRun, type RunHolder } from '../../../src/core/restate/run-log';
import { replicateRun, type RunSource } from '../../../src/core/restate/run-replica';
import { signed } from '../../../src/core/restate/signed';
import pino from 'pino';
import type { RunRow } from '../../../src/core/store/run-rows';
import { KEPT_PREVIOUS_BYTES } from '../../../src/shared/schemas/file-effect';
import { ArchonError } from '../../../src/shared/errors';
import type { RunEvent } from '../../../src/shared/schemas/events';
import { useRestate } from '../../support/restate';
import { useTempDirs } from '../../support/temp-dir';

// A Restate server and a worker on a loaded 2-core machine: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });
const tempDir = useTempDirs();
const restate = useRestate();

/** A run's record as a worker's data dir would hold it, growing as the test writes. */
function recordOf(runId: string) {
  const events: RunEvent[] = [];
  const rows = new Map<string, RunRow>();
  const source: RunSource = { events: (after, limit) => events.filter((event) => event.seq > after).slice(0, limit), rows: () => [...rows.values()] };
  return {
    source,
    event: (answer: string) => events.push({ type: 'run.completed', runId, seq: events.length + 1, ts: new Date().toISOString(), answer }),
    row: (id: string, status: string) => rows.set(`steps/${runId}/${id}`, { table: 'steps', key: `steps/${runId}/${id}`, place: 1, values: { run_id: runId, id, status } }),
    drop: (id: string) => rows.delete(`steps/${runId}/${id}`),
  };
}

async function cluster() {
  const server = await restate.server();
  const secretFile = restate.secretFile();
  await restate.worker(server, { id: 'w1', workspace: tempDir(), dataDir: tempDir(), secretFile });
  return { server, secret: clusterSecret(secretFile, tempDir()), cluster: new RestateCluster({ ingress: server.ingress, admin: server.admin }) };
}

const nothingSent = () => ({ sentThrough: 0, digests: new Map<string, string>() });
const holder = (worker: string): RunHolder => ({ dataDir: `dir-${worker}`, worker, attempt: randomUUID() });
const signal = () => AbortSignal.timeout(30_000);

async function failureOf(task: Promise<unknown>): Promise<string> {
  const error = await task.then(() => null, (failure: unknown) => failure);
  return ArchonError.isInstance(error) ? `${error.code}: ${error.message}` : String(error);
}

describe("a run as the cluster holds it while workers drive it", () => {
  it('holds what a worker sent before each call, changed and removed rows too, for a worker on another data dir to go on from', async () => {
    const { cluster: restateCluster, secret } = await cluster();
    const runId = randomUUID();
    const first = holder('w1');
    expect(await holdRun(restateCluster, secret, runId, first, signal())).toEqual({ previous: null, lastSeq: 0, rows: 0, source: null, stop: null });
    const record = recordOf(runId);
    const replica = replicateRun(restateCluster, secret, runId, first, record.source, nothingSent(), pino({ level: 'silent' }), { taken: () => undefined, stopAsked: () => undefined });
    record.event('one');
    record.row('a', 'running');
    record.row('b', 'pending');
    await replica.sync(signal());
    record.event('two');
    record.row('a', 'completed');
    record.drop('b');
    await replica.sync(signal());

    const second = holder('w2');
    const taken = await holdRun(restateCluster, secret, runId, second, signal());
    expect(taken).toEqual({ previous: first, lastSeq: 2, rows: 1, source: first.dataDir, stop: null });
    const held = await readHeldRun(restateCluster, secret, runId, taken, signal());
    expect(held.events.map((event) => event.seq)).toEqual([1, 2]);
    expect(held.rows).toEqual(record.source.rows());
    await replica.close();
  });

  it('keeps each event once: sent again by its holder it changes nothing, another under a kept seq is refused', async () => {
    const { cluster: restateCluster, secret } = await cluster();
    const runId = randomUUID();
    const first = holder('w1');
    await holdRun(restateCluster, secret, runId, first, signal());
    const event: RunEvent = { type: 'run.completed', runId, seq: 1, ts: new Date().toISOString(), answer: 'kept' };
    const append = (events: RunEvent[]) => restateCluster.call(`ArchonRunLog/${runId}/append`, signed(secret, 'ArchonRunLog/append', runId, { holder: first, events, rows: [], first: true, last: true }), null, z.unknown(), signal());
    await append([event]);
    await append([event]);
    expect(await failureOf(append([{ ...event, answer: 'another' }]))).toMatch(/^CLUSTER_REFUSED: .*has another event kept under seq 1/);
    const taken = await holdRun(restateCluster, secret, runId, holder('w2'), signal());
    expect(taken.lastSeq).toBe(1);
    expect((await readHeldRun(restateCluster, secret, runId, taken, signal())).events).toEqual([event]);
  });

  it('refuses what a worker cut off sends once another attempt took the run, and tells it to stop; a hold given up is not taken again', async () => {
    const { server, cluster: restateCluster, secret } = await cluster();
    const runId = randomUUID();
    const first = holder('w1');
    await holdRun(restateCluster, secret, runId, first, signal());
    const record = recordOf(runId);
    const stopped: ArchonError[] = [];
    const replica = replicateRun(restateCluster, secret, runId, first, record.source, nothingSent(), pino({ level: 'silent' }), { taken: (error) => stopped.push(error), stopAsked: () => undefined });
    record.event('before');
    await replica.sync(signal());

    await holdRun(restateCluster, secret, runId, holder('w2'), signal());
    record.event('after the other took it');
    expect(await failureOf(replica.sync(signal()))).toMatch(/^RUN_LEASED: Run .* was taken up by another attempt on the cluster/);
    expect(stopped.map((error) => error.code)).toContain('RUN_LEASED');
    await replica.close();
    // The first attempt's hold, sent again (copied from the journal), does not take the run back.
    const replayed = await fetch(`${server.ingress}/ArchonRunLog/${runId}/take`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(signed(secret, 'ArchonRunLog/take', runId, { holder: first })) });
    expect(await replayed.text()).toMatch(/held run .* before and gave it up/);
    const taken = await holdRun(restateCluster, secret, runId, holder('w3'), signal());
    expect((await readHeldRun(restateCluster, secret, runId, taken, signal())).events.map((event) => event.type === 'run.completed' && event.answer)).toEqual(['before']);
  });

  it("tells the holder of a stop a person asked with each send from then on, even with nothing new, and the next holder as it takes the run; a stop not signed, or a pause, is refused", async () => {
    const { server, cluster: restateCluster, secret } = await cluster();
    const runId = randomUUID();
    const first = holder('w1');
    await holdRun(restateCluster, secret, runId, first, signal());
    const told: string[] = [];
    const record = recordOf(runId);
    const replica = replicateRun(restateCluster, secret, runId, first, record.source, nothingSent(), pino({ level: 'silent' }), { taken: () => undefined, stopAsked: (stop) => told.push(stop.by) });
    await replica.sync(signal());
    expect(told).toEqual([]);
    const post = (body: unknown) => fetch(`${server.ingress}/ArchonRunLog/${runId}/stop`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(await (await post(signed('not the secret', 'ArchonRunLog/stop', runId, { stop: { action: 'stop', by: 'intruder' } }))).text()).toMatch(/not signed with this cluster's secret/);
    expect(await (await post(signed(secret, 'ArchonRunLog/stop', runId, { stop: { action: 'pause', by: 'the operator' } }))).text()).toMatch(/Refused: not a stop of one run/);
    await replica.sync(signal());
    expect(told).toEqual([]);

    expect(await stopHeldRun(restateCluster, secret, runId, 'the operator (archon stop)', signal())).toBe(true);
    await replica.sync(signal());
    await replica.sync(signal());
    expect(told.slice(-2)).toEqual(['the operator (archon stop)', 'the operator (archon stop)']);
    await replica.close();
    expect((await holdRun(restateCluster, secret, runId, holder('w2'), signal())).stop).toEqual({ action: 'stop', by: 'the operator (archon stop)' });
  });

  it('keeps a send of several batches whole: nothing of it before its last, nothing of one cut short, whether the same attempt sends again or another takes the run', async () => {
    const { cluster: restateCluster, secret } = await cluster();
    const runId = randomUUID();
    const first = holder('w1');
    await holdRun(restateCluster, secret, runId, first, signal());
    const row = (id: string) => ({ key: `steps/${runId}/${id}`, row: { table: 'steps' as const, key: `steps/${runId}/${id}`, place: 0, values: { run_id: runId, id, status: 'completed' } } });
    const append = (from: RunHolder, rows: ReturnType<typeof row>[], place: { first: boolean; last: boolean }) =>
      restateCluster.call(`ArchonRunLog/${runId}/append`, signed(secret, 'ArchonRunLog/append', runId, { holder: from, events: [], rows, ...place }), null, z.unknown(), signal());
    const heldRows = async (by: RunHolder) => {
      const taken = await holdRun(restateCluster, secret, runId, by, signal());
      return (await readHeldRun(restateCluster, secret, runId, taken, signal())).rows.map((kept) => kept.values.id);
    };
    // A send cut short after its first batch, then a new send by the same attempt: only the new one is kept.
    await append(first, [row('cut-short')], { first: true, last: false });
    await append(first, [row('a')], { first: true, last: false });
    await append(first, [row('b')], { first: false, last: true });
    const second = holder('w2');
    expect(await heldRows(second)).toEqual(['a', 'b']);
    // A send cut short when another attempt took the run: the taker finds none of it, and the rest of it is refused.
    await append(second, [row('c')], { first: true, last: false });
    const third = holder('w3');
    expect(await heldRows(third)).toEqual(['a', 'b']);
    expect(await failureOf(append(second, [row('d')], { first: false, last: true }))).toMatch(/^CLUSTER_REFUSED: .*\(409\)/);
    expect(await heldRows(holder('w4'))).toEqual(['a', 'b']);
  });

  it("holds a row as large as the largest Archon keeps (a write's previous content, 1 MB, for undo), in an append of its own, and gives it back whole", async () => {
    const { cluster: restateCluster, secret } = await cluster();
    const runId = randomUUID();
    const first = holder('w1');
    await holdRun(restateCluster, secret, runId, first, signal());
    const previous = randomBytes(KEPT_PREVIOUS_BYTES).toString('base64');
    const record = recordOf(runId);
    record.row('a', 'completed');
    const large: RunRow = { table: 'file_effects', key: `file_effects/${runId}/1`, place: 1, values: { run_id: runId, call_id: 'c1', path: 'big.bin', existed: 1, previous: { base64: previous }, previous_sha256: null, new_sha256: 'x', undone_at: null, previous_withheld: null } };
    const source: RunSource = { events: record.source.events, rows: () => [...record.source.rows(), large] };
    const replica = replicateRun(restateCluster, secret, runId, first, source, nothingSent(), pino({ level: 'silent' }), { taken: () => undefined, stopAsked: () => undefined });
    await replica.sync(signal());
    await replica.close();
    const taken = await holdRun(restateCluster, secret, runId, holder('w2'), signal());
    const held = await readHeldRun(restateCluster, secret, runId, taken, signal());
    expect(held.rows.find((row) => row.table === 'file_effects')).toEqual(large);
    expect(held.rows).toHaveLength(2);
  });

  it('refuses a hold or an append not signed for the run, and a copy changed behind Archon through the admin API', async () => {
    const { server, cluster: restateCluster, secret } = await cluster();
    const runId = randomUUID();
    const post = (handler: string, body: unknown) => fetch(`${server.ingress}/ArchonRunLog/${runId}/${handler}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const forged = await post('take', signed('not the secret', 'ArchonRunLog/take', runId, { holder: holder('intruder') }));
    expect(await forged.text()).toMatch(/not signed with this cluster's secret for ArchonRunLog\/take/);
    const elsewhere = await post('take', signed(secret, 'ArchonRunLog/take', randomUUID(), { holder: holder('intruder') }));
    expect(await elsewhere.text()).toMatch(/not signed with this cluster's secret/);

    const first = holder('w1');
    await holdRun(restateCluster, secret, runId, first, signal());
    const record = recordOf(runId);
    const replica = replicateRun(restateCluster, secret, runId, first, record.source, nothingSent(), pino({ level: 'silent' }), { taken: () => undefined, stopAsked: () => undefined });
    record.event('kept');
    record.row('a', 'completed');
    await replica.sync(signal());
    await replica.close();
    // Someone at the admin API writes another status into the kept row (its signature as it was).
    const state = await restateCluster.query(`SELECT key, value_utf8 FROM state WHERE service_name = 'ArchonRunLog' AND service_key = '${runId}'`, z.object({ key: z.string(), value_utf8: z.string() }), signal());
    const newState = Object.fromEntries(state.map((row) => [row.key, [...Buffer.from(row.key.startsWith('r:') ? row.value_utf8.replace('"completed"', '"pending"') : row.value_utf8)]]));
    const changed = await fetch(`${server.admin}/services/ArchonRunLog/state`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ object_key: runId, new_state: newState }) });
    expect(changed.ok, await changed.text()).toBe(true);
    const taken = await holdRun(restateCluster, secret, runId, holder('w2'), signal());
    expect(await failureOf(readHeldRun(restateCluster, secret, runId, taken, signal()))).toMatch(/^CLUSTER_REFUSED: The cluster's log of a run holds .* without the cluster's signature: it was changed outside Archon/);
  });
});
