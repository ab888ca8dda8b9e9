import * as restate from '@restatedev/restate-sdk';
import { z } from 'zod';
import { canonicalJson } from '../../shared/canonical-json';
import { ArchonError } from '../../shared/errors';
import { parseJsonOrUndefined } from '../../shared/json';
import { RunEventSchema, type RunEvent } from '../../shared/schemas/events';
import type { Log } from '../log';
import { sqlRunId, type RestateCluster } from './restate-cluster';
import { RUN_LOG } from './service-names';
import { signed, verified } from './signed';

const APPEND = `${RUN_LOG}/append`;
/** How long the cluster keeps a run's events after its drive began: a desk follows a run while it goes, not for ever. */
export const RUN_LOG_KEPT_MS = 14 * 24 * 3_600_000;
/** The most events one append carries, and about the most bytes: far below what Restate takes in one message. */
const BATCH_EVENTS = 200;
const BATCH_BYTES = 256 * 1024;
/** How often a worker sends what its run wrote since. */
const PUBLISH_EVERY_MS = 500;
/** How long a worker's last send may take once its run ended: the run's end is not held up by a cluster out of reach. */
const LAST_SEND_MS = 10_000;
/** The most events a desk reads in one ask. */
const READ_EVENTS = 500;

const AppendSchema = z.object({ events: z.array(RunEventSchema).min(1).max(BATCH_EVENTS) });

/** An event's state key: its seq, zero-padded, so keys sort as seqs do. */
const keyOf = (seq: number) => `e:${String(seq).padStart(12, '0')}`;

/**
 * A run's events as the worker that drives it sends them, signed with the cluster's secret, each kept
 * under its seq once: sent again, the same event is taken as kept; another under a seq already kept
 * (a worker on another data dir, whose own record of the run has other events) is refused. The log is
 * read through the admin API, so it is loaded only as far as an append needs it.
 */
export function runLogObject(secret: string) {
  return restate.object({
    name: RUN_LOG,
    handlers: {
      append: async (ctx: restate.ObjectContext, input: unknown): Promise<number> => {
        const { events } = verified(secret, APPEND, ctx.key, input, AppendSchema, "a run's events");
        for (const event of events) {
          if (event.runId !== ctx.key) throw new restate.TerminalError(`Refused: an event of run ${event.runId} sent as one of run ${ctx.key}.`);
          const kept = await ctx.get<RunEvent>(keyOf(event.seq));
          if (kept === null) ctx.set(keyOf(event.seq), event);
          else if (canonicalJson(kept) !== canonicalJson(event)) throw new restate.TerminalError(`Refused: run ${ctx.key} has another event kept under seq ${event.seq}; its events come from the data dir where it began.`);
        }
        return events.length;
      },
      clear: restate.handlers.object.exclusive({ ingressPrivate: true }, async (ctx: restate.ObjectContext, _input: unknown): Promise<void> => {
        ctx.clearAll();
      }),
    },
    options: { enableLazyState: true },
  });
}

/** The first of `events` that fit one append. */
function batchOf(events: readonly RunEvent[]): RunEvent[] {
  const batch: RunEvent[] = [];
  let bytes = 0;
  for (const event of events.slice(0, BATCH_EVENTS)) {
    bytes += JSON.stringify(event).length;
    if (batch.length > 0 && bytes > BATCH_BYTES) break;
    batch.push(event);
  }
  return batch;
}

export interface RunLogPublisher {
  /** Stops, once it sent what is left (within a bound). */
  close(): Promise<void>;
}

/**
 * Sends a run's events, as its data dir records them, to the cluster, from the first on (a worker
 * that goes on with a run another began sends them all again; each is kept once). A cluster out of
 * reach is tried again at the next tick; the run goes on regardless.
 */
export function publishRunLog(cluster: RestateCluster, secret: string, runId: string, eventsAfter: (seq: number, limit: number) => RunEvent[], log: Log): RunLogPublisher {
  let sentThrough = 0;
  let warned = false;
  const drain = async (signal: AbortSignal) => {
    for (let batch = batchOf(eventsAfter(sentThrough, BATCH_EVENTS)); batch.length > 0; batch = batchOf(eventsAfter(sentThrough, BATCH_EVENTS))) {
      const through = batch.at(-1)?.seq ?? sentThrough;
      await cluster.call(`${RUN_LOG}/${runId}/append`, signed(secret, APPEND, runId, { events: batch }), null, z.number(), signal);
      sentThrough = through;
    }
  };
  const closing = new AbortController();
  let sending: Promise<void> | null = null;
  const timer = setInterval(() => {
    sending ??= drain(AbortSignal.any([closing.signal, AbortSignal.timeout(LAST_SEND_MS)]))
      .catch((error: unknown) => {
        // Refused (the cluster keeps other events of this run, from the data dir where it began): sending again changes nothing.
        if (ArchonError.isInstance(error) && error.code === 'CLUSTER_REFUSED') {
          clearInterval(timer);
          log.warn({ runId, err: error }, "the cluster refused this run's events: it keeps those of the data dir where the run began");
          return;
        }
        if (closing.signal.aborted || warned) return;
        warned = true;
        log.warn({ runId, err: error }, "a run's events could not be sent to the cluster; desks following it see them once it answers");
      })
      .finally(() => {
        sending = null;
      });
  }, PUBLISH_EVERY_MS);
  return {
    async close() {
      clearInterval(timer);
      closing.abort();
      await sending;
      await drain(AbortSignal.timeout(LAST_SEND_MS)).catch((error: unknown) => log.warn({ runId, err: error }, "a run's last events could not be sent to the cluster"));
    },
  };
}

/** The events of a run the cluster's workers drive, after `afterSeq`, oldest first (at most a few hundred per ask). */
export async function readRunLog(cluster: RestateCluster, runId: string, afterSeq: number, signal: AbortSignal): Promise<RunEvent[]> {
  const rows = await cluster.query(
    `SELECT value_utf8 FROM state WHERE service_name = '${RUN_LOG}' AND service_key = ${sqlRunId(runId)} AND key > '${keyOf(afterSeq)}' ORDER BY key LIMIT ${READ_EVENTS}`,
    z.object({ value_utf8: z.string() }),
    signal,
  );
  return rows.flatMap((row) => {
    const event = RunEventSchema.safeParse(parseJsonOrUndefined(row.value_utf8));
    return event.success ? [event.data] : [];
  });
}
