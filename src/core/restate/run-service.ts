import { randomUUID } from 'node:crypto';
import * as restate from '@restatedev/restate-sdk';
import { z } from 'zod';
import { ScheduleIdSchema, type RunStatus } from '../../shared/schemas/run';
import { RunOrderSchema, ScheduleSchema, ScheduleStateSchema, type RunOrder, type Schedule, type ScheduleState } from '../../shared/schemas/run-order';
import { checkCron, nextFiring } from '../schedule/cron';
import type { RestateCluster } from './restate-cluster';
import { RUN_SERVICE, SCHEDULE_SERVICE } from './service-names';
import { latchIn } from './cluster-stop';
import { isSignedBy, signed } from './signed';

/** A run a worker drives: its order, and the schedule and firing that started it (nulls for a run sent with `--detach`). */
export interface DispatchedRun {
  order: RunOrder;
  scheduleId: string | null;
  /** The time the schedule named (the worker's clock), not when the worker got to it. */
  firedAt: string | null;
}

/** What a worker's host gives the cluster's runs: its clock, and a way to drive a run to its end. */
export interface RunDriver {
  now(): Date;
  /** Starts the run under `runId`, or goes on with it when an earlier attempt (here or on a worker that died) began it; how it ended. */
  drive(runId: string, run: DispatchedRun, signal: AbortSignal): Promise<RunStatus>;
}

/** A run keeps its attempt for a day: Restate would otherwise end an attempt that says nothing for a minute. */
const RUN_ATTEMPT_MS = 24 * 3_600_000;

const FiringSchema = z.object({ epoch: z.int().positive(), firedAt: z.iso.datetime() });
/** A drive: the order as the desk signed it, under the schedule's id, or (sent with `--detach`) under the run's. */
const DriveSchema = z.object({ scheduleId: ScheduleIdSchema.nullable(), firedAt: z.iso.datetime().nullable(), order: z.unknown() });
/** What a schedule's object keeps: the schedule as the desk signed it, which version it is, and its next firing. */
const EntrySchema = z.object({ signed: z.unknown(), epoch: z.int().positive(), next: z.iso.datetime() });
type Entry = z.infer<typeof EntrySchema>;

const ENTRY = 'entry';

/** `value` as `schema` reads it if the desk signed it under `key`; a terminal refusal otherwise (no retry makes it signed). */
function verified<T>(secret: string, key: string, value: unknown, schema: z.ZodType<T>, what: string, worker: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new restate.TerminalError(`Refused by worker ${worker}: not ${what} (${parsed.error.issues[0]?.message ?? 'invalid'}).`);
  if (!isSignedBy(secret, key, value)) throw new restate.TerminalError(`Refused by worker ${worker}: ${what} not signed with this cluster's secret under its key.`);
  return parsed.data;
}

/** A schedule the desk signed under its id, its cron readable. */
function verifiedSchedule(secret: string, scheduleId: string, value: unknown, worker: string): Schedule {
  const schedule = verified(secret, scheduleId, value, ScheduleSchema, 'a schedule', worker);
  try {
    checkCron(schedule.cron);
  } catch (error) {
    throw new restate.TerminalError((error as Error).message);
  }
  return schedule;
}

/** The next firing after now, as a delayed call to `fire`: the time and the delay are journaled, so a replay sends the same call. */
async function arm(ctx: restate.ObjectContext, driver: RunDriver, cron: string, epoch: number): Promise<string> {
  const { next, delayMs } = await ctx.run('next firing', () => {
    const now = driver.now();
    const at = nextFiring(cron, now);
    return { next: at.toISOString(), delayMs: Math.max(0, at.getTime() - now.getTime()) };
  });
  ctx.genericSend({ service: SCHEDULE_SERVICE, method: 'fire', key: ctx.key, parameter: { epoch, firedAt: next }, inputSerde: restate.serde.json, delay: delayMs });
  return next;
}

export interface RunWorker {
  id: string;
  driver: RunDriver;
  secret: string;
}

/**
 * Schedules: `set` keeps a signed schedule and arms its next firing; each firing starts a run (a new
 * run id, journaled) and arms the one after. A schedule set again or removed leaves its armed
 * firing to find a newer version, or none, and do nothing.
 */
function scheduleObject(worker: RunWorker) {
  return restate.object({
    name: SCHEDULE_SERVICE,
    handlers: {
      set: async (ctx: restate.ObjectContext, input: unknown): Promise<ScheduleState> => {
        const schedule = verifiedSchedule(worker.secret, ctx.key, input, worker.id);
        const epoch = ((await ctx.get<Entry>(ENTRY))?.epoch ?? 0) + 1;
        const next = await arm(ctx, worker.driver, schedule.cron, epoch);
        ctx.set<Entry>(ENTRY, { signed: input, epoch, next });
        return { id: ctx.key, schedule, next };
      },
      fire: async (ctx: restate.ObjectContext, input: unknown): Promise<void> => {
        const firing = FiringSchema.parse(input);
        const entry = EntrySchema.safeParse(await ctx.get(ENTRY));
        if (!entry.success || entry.data.epoch !== firing.epoch) return;
        const schedule = verifiedSchedule(worker.secret, ctx.key, entry.data.signed, worker.id);
        // While the cluster's emergency stop is latched a firing starts nothing; the schedule goes on from its next.
        if (!(await latchIn(ctx)).latched) {
          const runId = ctx.rand.uuidv4();
          ctx.genericSend({ service: RUN_SERVICE, method: 'drive', key: runId, parameter: { scheduleId: ctx.key, firedAt: firing.firedAt, order: entry.data.signed }, inputSerde: restate.serde.json });
        }
        const next = await arm(ctx, worker.driver, schedule.cron, entry.data.epoch);
        ctx.set<Entry>(ENTRY, { ...entry.data, next });
      },
      remove: async (ctx: restate.ObjectContext, input: unknown): Promise<boolean> => {
        if (!isSignedBy(worker.secret, ctx.key, input)) throw new restate.TerminalError(`Refused by worker ${worker.id}: the removal is not signed with this cluster's secret under the schedule's id.`);
        const had = (await ctx.get(ENTRY)) !== null;
        ctx.clearAll();
        return had;
      },
    },
  });
}

/** Runs: one per key, the run id; driven in one journaled step, so a worker that dies leaves it to another, which goes on with it. */
function runObject(worker: RunWorker) {
  return restate.object({
    name: RUN_SERVICE,
    handlers: {
      drive: async (ctx: restate.ObjectContext, input: unknown): Promise<RunStatus> => {
        const drive = DriveSchema.safeParse(input);
        if (!drive.success) throw new restate.TerminalError(`Refused by worker ${worker.id}: not a run it drives.`);
        const { scheduleId, firedAt } = drive.data;
        const order = verified(worker.secret, scheduleId ?? ctx.key, drive.data.order, RunOrderSchema, 'a run order', worker.id);
        const run: DispatchedRun = { order, scheduleId, firedAt };
        if ((await latchIn(ctx)).latched) return 'stopped';
        return ctx.run('run', () => worker.driver.drive(ctx.key, run, ctx.request().attemptCompletedSignal));
      },
    },
    options: { inactivityTimeout: RUN_ATTEMPT_MS, abortTimeout: RUN_ATTEMPT_MS },
  });
}

/** The schedules and runs a worker serves. */
export function runServices(worker: RunWorker) {
  return [scheduleObject(worker), runObject(worker)] as const;
}

/** The schedules the cluster keeps, read from its state through the admin API. */
export async function listSchedules(cluster: RestateCluster, signal: AbortSignal): Promise<ScheduleState[]> {
  const rows = await cluster.query(`SELECT service_key, value_utf8 FROM state WHERE service_name = '${SCHEDULE_SERVICE}' AND key = '${ENTRY}'`, z.object({ service_key: z.string(), value_utf8: z.string() }), signal);
  return rows.flatMap((row) => {
    const entry = EntrySchema.safeParse(JSON.parse(row.value_utf8));
    const schedule = entry.success ? ScheduleSchema.safeParse(entry.data.signed) : null;
    return entry.success && schedule?.success ? [{ id: row.service_key, schedule: schedule.data, next: entry.data.next }] : [];
  }).sort((a, b) => a.id.localeCompare(b.id));
}

/** A schedule set on the cluster (a new one, or a new version of one): its next firing. */
export function setSchedule(cluster: RestateCluster, secret: string, id: string, schedule: Schedule, signal: AbortSignal): Promise<ScheduleState> {
  return cluster.call(`${SCHEDULE_SERVICE}/${encodeURIComponent(id)}/set`, signed(secret, id, schedule), randomUUID(), ScheduleStateSchema, signal);
}

/** Sends a run to the cluster under a new id (`run --detach`): a worker drives it, whether or not this desk stays. */
export async function dispatchRun(cluster: RestateCluster, secret: string, order: RunOrder, signal: AbortSignal): Promise<string> {
  const runId = randomUUID();
  await cluster.send(`${RUN_SERVICE}/${runId}/drive`, { scheduleId: null, firedAt: null, order: signed(secret, runId, order) }, runId, signal);
  return runId;
}

/** Whether there was such a schedule; its armed firing finds it gone and starts nothing. */
export function removeSchedule(cluster: RestateCluster, secret: string, id: string, signal: AbortSignal): Promise<boolean> {
  return cluster.call(`${SCHEDULE_SERVICE}/${encodeURIComponent(id)}/remove`, signed(secret, id, { remove: id }), randomUUID(), z.boolean(), signal);
}
