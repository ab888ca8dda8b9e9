import { randomUUID } from 'node:crypto';
import * as restate from '@restatedev/restate-sdk';
import { z } from 'zod';
import { ScheduleIdSchema, type RunStatus } from '../../shared/schemas/run';
import { ScheduleSchema, ScheduleStateSchema, type Schedule, type ScheduleState } from '../../shared/schemas/schedule';
import { checkCron, nextFiring } from '../schedule/cron';
import type { RestateCluster } from './restate-cluster';
import { RUN_SERVICE, SCHEDULE_SERVICE } from './service-names';
import { latchIn } from './cluster-stop';
import { isSignedBy, signed } from './signed';

/** A run a schedule fired, as a worker drives it. */
export interface ScheduledRun {
  scheduleId: string;
  schedule: Schedule;
  /** The time the schedule named (the worker's clock), not when the worker got to it. */
  firedAt: string;
}

/** What a worker's host gives the cluster's runs: its clock, and a way to drive a run to its end. */
export interface RunDriver {
  now(): Date;
  /** Starts the run under `runId`, or goes on with it when an earlier attempt (here or on a worker that died) began it; how it ended. */
  drive(runId: string, run: ScheduledRun, signal: AbortSignal): Promise<RunStatus>;
}

/** A run keeps its attempt for a day: Restate would otherwise end an attempt that says nothing for a minute. */
const RUN_ATTEMPT_MS = 24 * 3_600_000;

const FiringSchema = z.object({ epoch: z.int().positive(), firedAt: z.iso.datetime() });
const DriveSchema = z.object({ scheduleId: ScheduleIdSchema, firedAt: z.iso.datetime(), schedule: z.unknown() });
/** What a schedule's object keeps: the schedule as the desk signed it, which version it is, and its next firing. */
const EntrySchema = z.object({ signed: z.unknown(), epoch: z.int().positive(), next: z.iso.datetime() });
type Entry = z.infer<typeof EntrySchema>;

const ENTRY = 'entry';

/** The schedule in `value` if the desk signed it under `scheduleId`; a terminal refusal otherwise (no retry makes it signed). */
function verified(secret: string, scheduleId: string, value: unknown, worker: string): Schedule {
  const schedule = ScheduleSchema.safeParse(value);
  if (!schedule.success) throw new restate.TerminalError(`Refused by worker ${worker}: not a schedule (${schedule.error.issues[0]?.message ?? 'invalid'}).`);
  if (!isSignedBy(secret, scheduleId, value)) throw new restate.TerminalError(`Refused by worker ${worker}: the schedule is not signed with this cluster's secret under its id.`);
  try {
    checkCron(schedule.data.cron);
  } catch (error) {
    throw new restate.TerminalError((error as Error).message);
  }
  return schedule.data;
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
        const schedule = verified(worker.secret, ctx.key, input, worker.id);
        const epoch = ((await ctx.get<Entry>(ENTRY))?.epoch ?? 0) + 1;
        const next = await arm(ctx, worker.driver, schedule.cron, epoch);
        ctx.set<Entry>(ENTRY, { signed: input, epoch, next });
        return { id: ctx.key, schedule, next };
      },
      fire: async (ctx: restate.ObjectContext, input: unknown): Promise<void> => {
        const firing = FiringSchema.parse(input);
        const entry = EntrySchema.safeParse(await ctx.get(ENTRY));
        if (!entry.success || entry.data.epoch !== firing.epoch) return;
        const schedule = verified(worker.secret, ctx.key, entry.data.signed, worker.id);
        // While the cluster's emergency stop is latched a firing starts nothing; the schedule goes on from its next.
        if (!(await latchIn(ctx)).latched) {
          const runId = ctx.rand.uuidv4();
          ctx.genericSend({ service: RUN_SERVICE, method: 'drive', key: runId, parameter: { scheduleId: ctx.key, firedAt: firing.firedAt, schedule: entry.data.signed }, inputSerde: restate.serde.json });
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
        const order = DriveSchema.safeParse(input);
        if (!order.success) throw new restate.TerminalError(`Refused by worker ${worker.id}: not a run it drives.`);
        const schedule = verified(worker.secret, order.data.scheduleId, order.data.schedule, worker.id);
        const run: ScheduledRun = { scheduleId: order.data.scheduleId, schedule, firedAt: order.data.firedAt };
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

/** Whether there was such a schedule; its armed firing finds it gone and starts nothing. */
export function removeSchedule(cluster: RestateCluster, secret: string, id: string, signal: AbortSignal): Promise<boolean> {
  return cluster.call(`${SCHEDULE_SERVICE}/${encodeURIComponent(id)}/remove`, signed(secret, id, { remove: id }), randomUUID(), z.boolean(), signal);
}
