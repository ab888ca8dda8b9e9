import * as restate from '@restatedev/restate-sdk';
import { z } from 'zod';
import { sleep } from '../../shared/abort';
import { canonicalJson } from '../../shared/canonical-json';
import { ArchonError } from '../../shared/errors';
import { parseJsonOrUndefined } from '../../shared/json';
import { RunEventSchema, type RunEvent } from '../../shared/schemas/events';
import { RunControlSchema } from '../../shared/schemas/run';
import { RunRowSchema, type RunRow } from '../store/run-rows';
import { sqlRunId, type RestateCluster } from './restate-cluster';
import { RUN_LOG } from './service-names';
import { isSignedBy, signed, verified } from './signed';

const TAKE = `${RUN_LOG}/take`;
const APPEND = `${RUN_LOG}/append`;
const STOP = `${RUN_LOG}/stop`;
/** What the object keeps is signed by it too: read back through the admin API, whose state anyone there could change, each is checked. */
const KEPT_EVENT = `${RUN_LOG}/event`;
const KEPT_ROW = `${RUN_LOG}/row`;
/** How long the cluster keeps a run's log after the last the run's worker sent: a desk follows a run while it goes and a while after, not for ever. */
export const RUN_LOG_KEPT_MS = 14 * 24 * 3_600_000;
/** The most events or rows one append carries, and about the most bytes: far below what Restate takes in one message. */
const BATCH_ITEMS = 200;
const BATCH_BYTES = 256 * 1024;
/** How long one append may take: a cluster that takes the connection and never answers does not hold a run's call for ever. */
const APPEND_MS = 60_000;
/** The most events a desk reads in one ask. */
const READ_EVENTS = 500;
/** How often, and how far apart, a worker reads a run's log again until it holds all the log's own count says. */
const CUT_READS = 40;
const CUT_READ_MS = 250;

/** Who holds a run: the data dir it stands on, the worker, and the attempt (a new one each time a worker takes it up). */
const HolderSchema = z.object({ dataDir: z.string().min(1).max(200), worker: z.string().min(1).max(200), attempt: z.string().min(1).max(100) });
export type RunHolder = z.infer<typeof HolderSchema>;
/** What the log holds: its last event's seq, how many rows, and the data dir they came from last (null: none yet). */
const ManifestSchema = z.object({ lastSeq: z.int().nonnegative(), rows: z.int().nonnegative(), source: z.string().nullable().default(null) });
type Manifest = z.infer<typeof ManifestSchema>;
/** A stop a person asked from a desk: the run's holder stops it, at its next send or once it takes the run. */
const StopAskedSchema = RunControlSchema.extend({ action: z.literal('stop') });
const TakenSchema = ManifestSchema.extend({ previous: HolderSchema.nullable(), stop: StopAskedSchema.nullable() });
export type TakenRun = z.infer<typeof TakenSchema>;

const RowChangeSchema = z.object({ key: z.string().min(1), row: RunRowSchema.nullable() });
/** One batch of a send: `first` drops what a send cut short left staged, `last` commits the batch with those staged since, so the log never holds part of a send. */
const AppendSchema = z.object({ holder: HolderSchema, events: z.array(RunEventSchema).max(BATCH_ITEMS), rows: z.array(RowChangeSchema).max(BATCH_ITEMS), first: z.boolean(), last: z.boolean() });
export type Batch = Pick<z.infer<typeof AppendSchema>, 'events' | 'rows'>;
export type RowChange = z.infer<typeof RowChangeSchema>;

const HOLDER = 'holder';
/** When the last append came: the log is cleared only once none came for as long as it is kept. */
const LAST_APPEND = 'lastAppend';
/** How many batches of the send under way are staged (`p:0`, `p:1`, …). */
const STAGED = 'staged';
const stagedKey = (index: number) => `p:${index}`;
/** The HTTP status an append from an attempt that does not hold the run is refused with. */
const FENCED_STATUS = 409;
const STOP_ASKED = 'stop';
const MANIFEST = 'manifest';
/** Attempts that held the run before: a take of one of them sent again (copied from the journal) is refused. */
const PAST = 'past';
/** An event's state key: its seq, zero-padded, so keys sort as seqs do (all before `e;`). */
const eventKey = (seq: number) => `e:${String(seq).padStart(12, '0')}`;
const rowKey = (key: string) => `r:${key}`;

const withoutSignature = (value: Record<string, unknown>) => Object.fromEntries(Object.entries(value).filter(([field]) => field !== 'signature'));

export type StopAsked = z.infer<typeof StopAskedSchema>;

async function stopAsked(ctx: restate.ObjectContext): Promise<StopAsked | null> {
  return StopAskedSchema.nullable().catch(null).parse(await ctx.get(STOP_ASKED));
}

async function manifestOf(ctx: restate.ObjectContext): Promise<z.infer<typeof ManifestSchema>> {
  return ManifestSchema.catch({ lastSeq: 0, rows: 0, source: null }).parse(await ctx.get(MANIFEST));
}

async function appendEvents(ctx: restate.ObjectContext, secret: string, events: readonly RunEvent[], manifest: Manifest): Promise<void> {
  for (const event of events) {
    if (event.runId !== ctx.key) throw new restate.TerminalError(`Refused: an event of run ${event.runId} sent as one of run ${ctx.key}.`);
    const kept = await ctx.get<Record<string, unknown>>(eventKey(event.seq));
    if (kept === null) ctx.set(eventKey(event.seq), signed(secret, KEPT_EVENT, `${ctx.key}/${event.seq}`, event));
    else if (canonicalJson(withoutSignature(kept)) !== canonicalJson(event)) throw new restate.TerminalError(`Refused: run ${ctx.key} has another event kept under seq ${event.seq}.`);
    manifest.lastSeq = Math.max(manifest.lastSeq, event.seq);
  }
}

async function changeRows(ctx: restate.ObjectContext, secret: string, changes: readonly RowChange[], manifest: Manifest): Promise<void> {
  for (const { key, row } of changes) {
    if (row !== null && row.key !== key) throw new restate.TerminalError(`Refused: a row named ${row.key} sent as ${key}.`);
    const had = (await ctx.get(rowKey(key))) !== null;
    if (row === null) ctx.clear(rowKey(key));
    else ctx.set(rowKey(key), signed(secret, KEPT_ROW, `${ctx.key}/${key}`, row));
    manifest.rows += (row === null ? 0 : 1) - (had ? 1 : 0);
  }
}

async function stagedCount(ctx: restate.ObjectContext): Promise<number> {
  return z.int().nonnegative().catch(0).parse(await ctx.get(STAGED));
}

/** Drops the batches of a send that never committed (its attempt gave the run up). */
async function dropStaged(ctx: restate.ObjectContext): Promise<void> {
  for (let index = 0, staged = await stagedCount(ctx); index < staged; index++) ctx.clear(stagedKey(index));
  ctx.clear(STAGED);
}

/** The staged batches and `batch`, applied as one; the manifest names the holder's data dir as where the log came from. */
async function commit(ctx: restate.ObjectContext, secret: string, batch: Batch, holder: RunHolder): Promise<void> {
  const manifest = await manifestOf(ctx);
  const staged = await stagedCount(ctx);
  for (let index = 0; index < staged; index++) {
    const earlier = await ctx.get<Batch>(stagedKey(index));
    if (earlier) {
      await appendEvents(ctx, secret, earlier.events, manifest);
      await changeRows(ctx, secret, earlier.rows, manifest);
    }
  }
  await appendEvents(ctx, secret, batch.events, manifest);
  await changeRows(ctx, secret, batch.rows, manifest);
  await dropStaged(ctx);
  ctx.set<Manifest>(MANIFEST, { ...manifest, source: holder.dataDir });
}

/**
 * A run as the cluster holds it while workers drive it: its events (what a desk follows) and its
 * state's rows (what another worker, on another data dir, goes on from), each kept once. One attempt
 * holds it at a time (`take`); an append from any other, a worker cut off that still goes on, is
 * refused (409), so it stops before its next call. A send of several batches is staged until its
 * last, then kept whole. The log is read through the admin API, so it is loaded only as far as an
 * append needs it.
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
        await dropStaged(ctx);
        ctx.set(HOLDER, holder);
        return { previous, ...(await manifestOf(ctx)), stop: await stopAsked(ctx) };
      },
      append: async (ctx: restate.ObjectContext, input: unknown): Promise<StopAsked | null> => {
        const { holder, events, rows, first, last } = verified(secret, APPEND, ctx.key, input, AppendSchema, "a run's log");
        const current = HolderSchema.nullable().catch(null).parse(await ctx.get(HOLDER));
        if (current?.attempt !== holder.attempt) {
          throw new restate.TerminalError(`Refused: run ${ctx.key} is held by ${current ? `worker ${current.worker}` : 'no worker'}, not by this attempt of worker ${holder.worker}, which must stop driving it.`, { errorCode: FENCED_STATUS });
        }
        if (first) await dropStaged(ctx);
        ctx.set(LAST_APPEND, await ctx.date.now());
        if (last) await commit(ctx, secret, { events, rows }, holder);
        else {
          const staged = await stagedCount(ctx);
          ctx.set<Batch>(stagedKey(staged), { events, rows });
          ctx.set(STAGED, staged + 1);
        }
        return stopAsked(ctx);
      },
      stop: async (ctx: restate.ObjectContext, input: unknown): Promise<boolean> => {
        const { stop } = verified(secret, STOP, ctx.key, input, z.object({ stop: StopAskedSchema }), "a stop of one run");
        ctx.set(STOP_ASKED, stop);
        return (await ctx.get(HOLDER)) !== null;
      },
      clear: restate.handlers.object.exclusive({ ingressPrivate: true }, async (ctx: restate.ObjectContext, _input: unknown): Promise<void> => {
        const last = z.number().nullable().catch(null).parse(await ctx.get(LAST_APPEND));
        const since = last === null ? RUN_LOG_KEPT_MS : (await ctx.date.now()) - last;
        if (since < RUN_LOG_KEPT_MS) clearLater(ctx, RUN_LOG_KEPT_MS - since);
        else ctx.clearAll();
      }),
    },
    options: { enableLazyState: true },
  });
}

/** Clears the run's log after `delayMs`, unless an append came since (see `clear`). */
export function clearLater(ctx: restate.ObjectContext, delayMs: number = RUN_LOG_KEPT_MS): void {
  ctx.genericSend({ service: RUN_LOG, method: 'clear', key: ctx.key, parameter: null, inputSerde: restate.serde.json, delay: delayMs });
}

/** Takes the hold on a run for `holder`: who held it before (null: nobody), and what the log holds. */
export function holdRun(cluster: RestateCluster, secret: string, runId: string, holder: RunHolder, signal: AbortSignal): Promise<TakenRun> {
  return cluster.call(`${RUN_LOG}/${runId}/take`, signed(secret, TAKE, runId, { holder }), `${runId}/${holder.attempt}`, TakenSchema, signal);
}

/** Asks whoever holds the run, or takes it next, to stop it (a person's stop, from a desk): whether a worker has taken it up. */
export function stopHeldRun(cluster: RestateCluster, secret: string, runId: string, by: string, signal: AbortSignal): Promise<boolean> {
  return cluster.call(`${RUN_LOG}/${runId}/stop`, signed(secret, STOP, runId, { stop: { action: 'stop', by } }), null, z.boolean(), signal);
}

/** One append to the run's log by its holder: a stop a person asked of the run, if one was. */
export function appendRun(cluster: RestateCluster, secret: string, runId: string, holder: RunHolder, batch: Batch, place: { first: boolean; last: boolean }, signal: AbortSignal): Promise<StopAsked | null> {
  return cluster.call(`${RUN_LOG}/${runId}/append`, signed(secret, APPEND, runId, { holder, ...batch, ...place }), null, StopAskedSchema.nullable(), AbortSignal.any([signal, AbortSignal.timeout(APPEND_MS)]));
}

/** The first of `items` that fit one append. */
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

/** `items` in parts that fit one append each. */
export function inAppends<T>(items: readonly T[]): T[][] {
  const parts: T[][] = [];
  for (let at = 0; at < items.length; ) {
    const part = batchOf(items.slice(at));
    parts.push(part);
    at += part.length;
  }
  return parts;
}

/** The cluster refused an append because another attempt holds the run now. */
export function isFenced(error: unknown): boolean {
  return ArchonError.isInstance(error) && error.code === 'CLUSTER_REFUSED' && (error.details as { status?: unknown } | undefined)?.status === FENCED_STATUS;
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

/**
 * The keys of the rows the log holds of a run, read until there are as many as `taken` says: a run
 * that goes on from the data dir they came from sends each again, or removes it if it is gone there.
 */
export async function heldRowKeys(cluster: RestateCluster, runId: string, taken: TakenRun, signal: AbortSignal): Promise<string[]> {
  for (let read = 1; ; read++) {
    const keys = taken.rows === 0 ? [] : await cluster.query(`SELECT key FROM state WHERE service_name = '${RUN_LOG}' AND service_key = ${sqlRunId(runId)} AND key LIKE 'r:%'`, z.object({ key: z.string() }), signal);
    if (keys.length === taken.rows) return keys.map((row) => row.key.slice(2));
    if (read >= CUT_READS) throw new ArchonError('CLUSTER_REFUSED', `The cluster's log of run ${runId} lists ${keys.length} of its ${taken.rows} rows; the run does not go on until it lists them all. Try again once the cluster answers whole.`);
    await sleep(CUT_READ_MS, signal);
  }
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
