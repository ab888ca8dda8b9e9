import * as restate from '@restatedev/restate-sdk';
import { z } from 'zod';
import { raceAbort, sleep } from '../../shared/abort';
import { canonicalJson } from '../../shared/canonical-json';
import { ArchonError } from '../../shared/errors';
import { parseJsonOrUndefined } from '../../shared/json';
import { RunEventSchema, type RunEvent } from '../../shared/schemas/events';
import type { Log } from '../log';
import { rowDigest, RunRowSchema, type RunRow } from '../store/run-rows';
import { sqlRunId, type RestateCluster } from './restate-cluster';
import { RUN_LOG } from './service-names';
import { isSignedBy, signed, verified } from './signed';

const TAKE = `${RUN_LOG}/take`;
const APPEND = `${RUN_LOG}/append`;
/** What the object keeps is signed by it too: read back through the admin API, whose state anyone there could change, each is checked. */
const KEPT_EVENT = `${RUN_LOG}/event`;
const KEPT_ROW = `${RUN_LOG}/row`;
/** How long the cluster keeps a run's log after its drive began: a desk follows a run while it goes, not for ever. */
export const RUN_LOG_KEPT_MS = 14 * 24 * 3_600_000;
/** The most events or rows one append carries, and about the most bytes: far below what Restate takes in one message. */
const BATCH_ITEMS = 200;
const BATCH_BYTES = 256 * 1024;
/** How often a worker sends what its run wrote since, besides before each call. */
const PUBLISH_EVERY_MS = 500;
/** How long a worker's last send may take once its run ended: the run's end is not held up by a cluster out of reach. */
const LAST_SEND_MS = 10_000;
/** The most events a desk reads in one ask. */
const READ_EVENTS = 500;
/** How often, and how far apart, a worker reads a run's log again until it holds all the log's own count says. */
const CUT_READS = 40;
const CUT_READ_MS = 250;

/** Who holds a run: the data dir it stands on, the worker, and the attempt (a new one each time a worker takes it up). */
const HolderSchema = z.object({ dataDir: z.string().min(1).max(200), worker: z.string().min(1).max(200), attempt: z.string().min(1).max(100) });
export type RunHolder = z.infer<typeof HolderSchema>;
/** What the log holds: its last event's seq and how many rows. */
const ManifestSchema = z.object({ lastSeq: z.int().nonnegative(), rows: z.int().nonnegative() });
const TakenSchema = ManifestSchema.extend({ previous: HolderSchema.nullable() });
export type TakenRun = z.infer<typeof TakenSchema>;

const RowChangeSchema = z.object({ key: z.string().min(1), row: RunRowSchema.nullable() });
const AppendSchema = z.object({ holder: HolderSchema, events: z.array(RunEventSchema).max(BATCH_ITEMS), rows: z.array(RowChangeSchema).max(BATCH_ITEMS) });
type RowChange = z.infer<typeof RowChangeSchema>;

const HOLDER = 'holder';
const MANIFEST = 'manifest';
/** Attempts that held the run before: a take of one of them sent again (copied from the journal) is refused. */
const PAST = 'past';
/** An event's state key: its seq, zero-padded, so keys sort as seqs do (all before `e;`). */
const eventKey = (seq: number) => `e:${String(seq).padStart(12, '0')}`;
const rowKey = (key: string) => `r:${key}`;

const withoutSignature = (value: Record<string, unknown>) => Object.fromEntries(Object.entries(value).filter(([field]) => field !== 'signature'));

async function manifestOf(ctx: restate.ObjectContext): Promise<z.infer<typeof ManifestSchema>> {
  return ManifestSchema.catch({ lastSeq: 0, rows: 0 }).parse(await ctx.get(MANIFEST));
}

async function appendEvents(ctx: restate.ObjectContext, secret: string, events: readonly RunEvent[], manifest: z.infer<typeof ManifestSchema>): Promise<void> {
  for (const event of events) {
    if (event.runId !== ctx.key) throw new restate.TerminalError(`Refused: an event of run ${event.runId} sent as one of run ${ctx.key}.`);
    const kept = await ctx.get<Record<string, unknown>>(eventKey(event.seq));
    if (kept === null) ctx.set(eventKey(event.seq), signed(secret, KEPT_EVENT, `${ctx.key}/${event.seq}`, event));
    else if (canonicalJson(withoutSignature(kept)) !== canonicalJson(event)) throw new restate.TerminalError(`Refused: run ${ctx.key} has another event kept under seq ${event.seq}.`);
    manifest.lastSeq = Math.max(manifest.lastSeq, event.seq);
  }
}

async function changeRows(ctx: restate.ObjectContext, secret: string, changes: readonly RowChange[], manifest: z.infer<typeof ManifestSchema>): Promise<void> {
  for (const { key, row } of changes) {
    if (row !== null && row.key !== key) throw new restate.TerminalError(`Refused: a row named ${row.key} sent as ${key}.`);
    const had = (await ctx.get(rowKey(key))) !== null;
    if (row === null) ctx.clear(rowKey(key));
    else ctx.set(rowKey(key), signed(secret, KEPT_ROW, `${ctx.key}/${key}`, row));
    manifest.rows += (row === null ? 0 : 1) - (had ? 1 : 0);
  }
}

/**
 * A run as the cluster holds it while workers drive it: its events (what a desk follows) and its
 * state's rows (what another worker, on another data dir, goes on from), each kept once. One attempt
 * holds it at a time (`take`); an append from any other, a worker cut off that still goes on, is
 * refused, so it stops before it does anything more. The log is read through the admin API, so it
 * is loaded only as far as an append needs it.
 */
export function runLogObject(secret: string) {
  return restate.object({
    name: RUN_LOG,
    handlers: {
      take: async (ctx: restate.ObjectContext, input: unknown): Promise<TakenRun> => {
        const { holder } = verified(secret, TAKE, ctx.key, input, z.object({ holder: HolderSchema }), 'a hold on a run');
        const previous = HolderSchema.nullable().catch(null).parse(await ctx.get(HOLDER));
        const past = z.array(z.string()).catch([]).parse(await ctx.get(PAST));
        if (past.includes(holder.attempt)) throw new restate.TerminalError(`Refused: attempt ${holder.attempt} held run ${ctx.key} before and gave it up; a hold is taken once.`);
        if (previous && previous.attempt !== holder.attempt) ctx.set(PAST, [...past, previous.attempt].slice(-100));
        ctx.set(HOLDER, holder);
        return { previous, ...(await manifestOf(ctx)) };
      },
      append: async (ctx: restate.ObjectContext, input: unknown): Promise<number> => {
        const { holder, events, rows } = verified(secret, APPEND, ctx.key, input, AppendSchema, "a run's log");
        const current = HolderSchema.nullable().catch(null).parse(await ctx.get(HOLDER));
        if (current?.attempt !== holder.attempt) {
          throw new restate.TerminalError(`Refused: run ${ctx.key} is held by ${current ? `worker ${current.worker}` : 'no worker'}, not by this attempt of worker ${holder.worker}, which must stop driving it.`);
        }
        const manifest = await manifestOf(ctx);
        await appendEvents(ctx, secret, events, manifest);
        await changeRows(ctx, secret, rows, manifest);
        ctx.set(MANIFEST, manifest);
        return events.length + rows.length;
      },
      clear: restate.handlers.object.exclusive({ ingressPrivate: true }, async (ctx: restate.ObjectContext, _input: unknown): Promise<void> => {
        ctx.clearAll();
      }),
    },
    options: { enableLazyState: true },
  });
}

/** Takes the hold on a run for `holder`: who held it before (null: nobody), and what the log holds. */
export function holdRun(cluster: RestateCluster, secret: string, runId: string, holder: RunHolder, signal: AbortSignal): Promise<TakenRun> {
  return cluster.call(`${RUN_LOG}/${runId}/take`, signed(secret, TAKE, runId, { holder }), `${runId}/${holder.attempt}`, TakenSchema, signal);
}

/** Where a run's events and rows come from on the worker that drives it. */
export interface RunSource {
  events(afterSeq: number, limit: number): RunEvent[];
  rows(): RunRow[];
}

export interface RunReplica {
  /** Sends what the run wrote since the last send; resolves once the cluster holds it. */
  sync(signal: AbortSignal): Promise<void>;
  /** Stops, once it sent what is left (within a bound). */
  close(): Promise<void>;
}

/** The changes to send: the first of them that fit one append. */
function batchOf<T>(items: readonly T[]): T[] {
  const batch: T[] = [];
  let bytes = 0;
  for (const item of items.slice(0, BATCH_ITEMS)) {
    bytes += JSON.stringify(item).length;
    if (batch.length > 0 && bytes > BATCH_BYTES) break;
    batch.push(item);
  }
  return batch;
}

/** What a replica has sent: the seq of the last event, and the digest of each row. */
export interface SentSoFar {
  sentThrough: number;
  digests: Map<string, string>;
}

/**
 * Keeps a run's copy on the cluster, from the worker that holds it: what the run wrote is sent every
 * half second, and before each of its calls (`sync`), so the cluster holds all a call was made from
 * before it leaves. A refusal means another attempt took the run: `onTaken` stops this one.
 */
export function replicateRun(cluster: RestateCluster, secret: string, runId: string, holder: RunHolder, source: RunSource, sent: SentSoFar, log: Log, onTaken: (error: ArchonError) => void): RunReplica {
  const send = async (signal: AbortSignal) => {
    for (let events = batchOf(source.events(sent.sentThrough, BATCH_ITEMS)); events.length > 0; events = batchOf(source.events(sent.sentThrough, BATCH_ITEMS))) {
      await cluster.call(`${RUN_LOG}/${runId}/append`, signed(secret, APPEND, runId, { holder, events, rows: [] }), null, z.number(), signal);
      sent.sentThrough = events.at(-1)?.seq ?? sent.sentThrough;
    }
    const changes = changedRows(source.rows(), sent.digests);
    for (let batch = batchOf(changes.map((change) => change.change)), at = 0; batch.length > 0; at += batch.length, batch = batchOf(changes.slice(at).map((change) => change.change))) {
      await cluster.call(`${RUN_LOG}/${runId}/append`, signed(secret, APPEND, runId, { holder, events: [], rows: batch }), null, z.number(), signal);
      for (const { change, digest } of changes.slice(at, at + batch.length)) {
        if (digest === null) sent.digests.delete(change.key);
        else sent.digests.set(change.key, digest);
      }
    }
  };
  const refused = (error: unknown) => ArchonError.isInstance(error) && error.code === 'CLUSTER_REFUSED';
  const closing = new AbortController();
  // One send at a time; a sync asked for while one is under way waits for it, then sends what is left (shared by all who asked meanwhile).
  let running: Promise<void> = Promise.resolve();
  let queued: Promise<void> | null = null;
  const sendNext = () => {
    queued ??= running.catch(() => undefined).then(() => {
      queued = null;
      running = send(closing.signal);
      return running;
    });
    return queued;
  };
  let warned = false;
  const timer = setInterval(() => {
    if (queued) return;
    sendNext().catch((error: unknown) => {
      if (refused(error)) {
        clearInterval(timer);
        onTaken(takenError(runId, error));
        return;
      }
      if (closing.signal.aborted || warned) return;
      warned = true;
      log.warn({ runId, err: error }, "a run's log could not be sent to the cluster; desks following it see it once the cluster answers");
    });
  }, PUBLISH_EVERY_MS);
  return {
    async sync(signal) {
      try {
        await raceAbort(sendNext(), signal);
      } catch (error) {
        if (!refused(error)) throw error;
        const taken = takenError(runId, error);
        onTaken(taken);
        throw taken;
      }
    },
    async close() {
      clearInterval(timer);
      closing.abort();
      await (queued ?? running).catch(() => undefined);
      await send(AbortSignal.timeout(LAST_SEND_MS)).catch((error: unknown) => log.warn({ runId, err: error }, "a run's last events could not be sent to the cluster"));
    },
  };
}

function takenError(runId: string, cause: unknown): ArchonError {
  return new ArchonError('RUN_LEASED', `Run ${runId} was taken up by another attempt on the cluster (this worker was cut off from it); this one stopped driving it.`, { cause });
}

/** The rows that changed since they were sent (null: gone), with their new digests. */
function changedRows(rows: readonly RunRow[], digests: ReadonlyMap<string, string>): { change: RowChange; digest: string | null }[] {
  const now = new Map(rows.map((row) => [row.key, row]));
  const changed = rows.flatMap((row) => {
    const digest = rowDigest(row);
    return digests.get(row.key) === digest ? [] : [{ change: { key: row.key, row }, digest }];
  });
  const gone = [...digests.keys()].filter((key) => !now.has(key)).map((key) => ({ change: { key, row: null }, digest: null }));
  return [...changed, ...gone];
}

const StateRowSchema = z.object({ key: z.string(), value_utf8: z.string() });

/** A value the log kept, if it carries the log's signature for `purpose` under `key`. */
function keptValue(secret: string, purpose: string, key: string, value: string): Record<string, unknown> {
  const parsed = parseJsonOrUndefined(value);
  if (!isSignedBy(secret, purpose, key, parsed)) throw new ArchonError('CLUSTER_REFUSED', `The cluster's log of a run holds ${key} without the cluster's signature: it was changed outside Archon. The run is not taken up from it.`);
  return withoutSignature(parsed as Record<string, unknown>);
}

/**
 * The run as the cluster holds it, for a worker on another data dir to go on from: every event and
 * row, each checked against the log's signature, read until there are as many as `taken` says (the
 * admin API may lag behind an append it has just taken).
 */
export async function readHeldRun(cluster: RestateCluster, secret: string, runId: string, taken: TakenRun, signal: AbortSignal): Promise<{ events: RunEvent[]; rows: RunRow[] }> {
  for (let read = 1; ; read++) {
    const state = await cluster.query(`SELECT key, value_utf8 FROM state WHERE service_name = '${RUN_LOG}' AND service_key = ${sqlRunId(runId)} AND (key LIKE 'e:%' OR key LIKE 'r:%')`, StateRowSchema, signal);
    const events = state.filter((row) => row.key.startsWith('e:')).map((row) => RunEventSchema.parse(keptValue(secret, KEPT_EVENT, `${runId}/${Number(row.key.slice(2))}`, row.value_utf8)));
    const rows = state.filter((row) => row.key.startsWith('r:')).map((row) => RunRowSchema.parse(keptValue(secret, KEPT_ROW, `${runId}/${row.key.slice(2)}`, row.value_utf8)));
    events.sort((a, b) => a.seq - b.seq);
    const whole = rows.length === taken.rows && events.length === taken.lastSeq && events.every((event, index) => event.seq === index + 1);
    if (whole) return { events, rows };
    if (read >= CUT_READS) throw new ArchonError('CLUSTER_REFUSED', `The cluster's log of run ${runId} holds ${events.length} of its ${taken.lastSeq} events and ${rows.length} of its ${taken.rows} rows; it is not taken up from part of it. Try again once the cluster answers whole.`);
    await sleep(CUT_READ_MS, signal);
  }
}

/** What a worker that took a run up from the cluster has, as sent: the log it read. */
export function sentSoFar(held: { events: readonly RunEvent[]; rows: readonly RunRow[] } | null, lastSeq: number): SentSoFar {
  return { sentThrough: held?.events.at(-1)?.seq ?? lastSeq, digests: new Map((held?.rows ?? []).map((row) => [row.key, rowDigest(row)])) };
}

/** The events of a run the cluster's workers drive, after `afterSeq`, oldest first (at most a few hundred per ask). */
export async function readRunLog(cluster: RestateCluster, runId: string, afterSeq: number, signal: AbortSignal): Promise<RunEvent[]> {
  const rows = await cluster.query(
    `SELECT value_utf8 FROM state WHERE service_name = '${RUN_LOG}' AND service_key = ${sqlRunId(runId)} AND key > '${eventKey(afterSeq)}' AND key < 'e;' ORDER BY key LIMIT ${READ_EVENTS}`,
    z.object({ value_utf8: z.string() }),
    signal,
  );
  return rows.flatMap((row) => {
    const event = RunEventSchema.safeParse(parseJsonOrUndefined(row.value_utf8));
    return event.success ? [event.data] : [];
  });
}
