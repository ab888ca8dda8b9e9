import { raceAbort } from '../../shared/abort';
import { ArchonError } from '../../shared/errors';
import type { RunEvent } from '../../shared/schemas/events';
import type { RunControl } from '../../shared/schemas/run';
import type { Log } from '../log';
import { rowDigest, type RunRow } from '../store/run-rows';
import type { RestateCluster } from './restate-cluster';
import { appendRun, inAppends, isFenced, type Batch, type RowChange, type RunHolder, type TakenRun } from './run-log';

/** How often a worker sends what its run wrote since, besides before each call. */
const PUBLISH_EVERY_MS = 500;
/** How long a worker's last send may take once its run ended: the run's end is not held up by a cluster out of reach. */
const LAST_SEND_MS = 10_000;

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

/** What the cluster tells the worker that holds a run, as it sends: another attempt took the run; a person asked it to stop. */
export interface RunHolderEvents {
  taken(error: ArchonError): void;
  stopAsked(stop: RunControl): void;
}

/** What a replica has sent: the seq of the last event, and the digest of each row. */
export interface SentSoFar {
  sentThrough: number;
  digests: Map<string, string>;
}

/**
 * Keeps a run's copy on the cluster, from the worker that holds it: what the run wrote is sent every
 * half second, and before each of its calls (`sync`), so the cluster holds all a call was made from
 * before it leaves. A refusal means another attempt took the run: `on.taken` stops this one; a stop a
 * person asked is told with every send until the run ends (`on.stopAsked`).
 */
export function replicateRun(cluster: RestateCluster, secret: string, runId: string, holder: RunHolder, source: RunSource, sent: SentSoFar, log: Log, on: RunHolderEvents): RunReplica {
  const append = async (batch: Batch, place: { first: boolean; last: boolean }, signal: AbortSignal) => {
    const stop = await appendRun(cluster, secret, runId, holder, batch, place, signal);
    if (stop) on.stopAsked(stop);
  };
  // One send is kept whole or not at all; with nothing new it still asks, so an idle run hears a stop, or that another attempt took it, within the tick.
  const send = async (signal: AbortSignal) => {
    const events = source.events(sent.sentThrough, Number.MAX_SAFE_INTEGER);
    const changes = changedRows(source.rows(), sent.digests);
    const batches: Batch[] = [...inAppends(events).map((part) => ({ events: part, rows: [] })), ...inAppends(changes.map((change) => change.change)).map((part) => ({ events: [], rows: part }))];
    if (batches.length === 0) batches.push({ events: [], rows: [] });
    for (const [index, batch] of batches.entries()) await append(batch, { first: index === 0, last: index === batches.length - 1 }, signal);
    sent.sentThrough = events.at(-1)?.seq ?? sent.sentThrough;
    for (const { change, digest } of changes) {
      if (digest === null) sent.digests.delete(change.key);
      else sent.digests.set(change.key, digest);
    }
  };
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
      if (isFenced(error)) {
        clearInterval(timer);
        on.taken(takenError(runId, error));
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
        if (!isFenced(error)) throw error;
        const taken = takenError(runId, error);
        on.taken(taken);
        throw taken;
      }
    },
    async close() {
      clearInterval(timer);
      closing.abort();
      await (queued ?? running).catch(() => undefined);
      await send(AbortSignal.timeout(LAST_SEND_MS)).catch((error: unknown) => {
        if (!isFenced(error)) log.warn({ runId, err: error }, "a run's last events could not be sent to the cluster");
      });
    },
  };
}

/** What a worker that took a run up from the cluster's log has, as sent: that log. */
export function sentSoFar(held: { events: readonly RunEvent[]; rows: readonly RunRow[] }): SentSoFar {
  return { sentThrough: held.events.at(-1)?.seq ?? 0, digests: new Map(held.rows.map((row) => [row.key, rowDigest(row)])) };
}

/** What a worker that goes on from its own record, where the log came from, has sent: the log's events (the same as its own), and none of its rows for sure (each is sent again, or removed if gone here). */
export function sentFromHere(taken: TakenRun, rowKeys: readonly string[]): SentSoFar {
  return { sentThrough: taken.lastSeq, digests: new Map(rowKeys.map((key) => [key, ''])) };
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
