import { randomUUID } from 'node:crypto';
import * as restate from '@restatedev/restate-sdk';
import { z } from 'zod';
import { parseJsonOrUndefined } from '../../shared/json';
import { RunStatusSchema, ScheduleIdSchema, type RunStatus } from '../../shared/schemas/run';
import { RunOrderSchema, ScheduleSchema, ScheduleStateSchema, SkippedFiringSchema, type ClusterRun, type RunOrder, type Schedule, type ScheduleState } from '../../shared/schemas/run-order';
import { checkCron, nextFiring } from '../schedule/cron';
import { latchIn } from './cluster-stop';
import { sqlRunId, type RestateCluster } from './restate-cluster';
import { clearLater } from './run-log';
import { RUN_SERVICE, SCHEDULE_SERVICE } from './service-names';
import { isNewer, signed, SignedAtSchema, verified } from './signed';

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

export interface RunWorker {
  id: string;
  driver: RunDriver;
  secret: string;
  /** Where a firing asks whether its schedule's previous run is still going. */
  cluster: RestateCluster;
}

/** A run keeps its attempt for a day: Restate would otherwise end an attempt that says nothing for a minute. */
const RUN_ATTEMPT_MS = 24 * 3_600_000;
/** A drive that fails before its run ends (a setting it cannot take) is tried this often, then given up. */
const DRIVE_ATTEMPTS = 3;

const SET = `${SCHEDULE_SERVICE}/set`;
const REMOVE = `${SCHEDULE_SERVICE}/remove`;
const DRIVE = `${RUN_SERVICE}/drive`;

const SetScheduleSchema = ScheduleSchema.extend(SignedAtSchema.shape);
const RemoveScheduleSchema = z.object({ remove: ScheduleIdSchema }).extend(SignedAtSchema.shape);
/** One firing, armed by the schedule's own object (callable by no ingress): the arming it belongs to and the time it names. */
const FiringSchema = z.object({ arming: z.string().min(1), firedAt: z.iso.datetime() });
/** A drive, signed under the run's id: by the desk (`--detach`), or by the worker that fired the schedule. */
const DriveSchema = z.object({ scheduleId: ScheduleIdSchema.nullable(), firedAt: z.iso.datetime().nullable(), order: RunOrderSchema.strict() });
/**
 * What a schedule's object keeps: the schedule, the arming its next firing belongs to (a new one each
 * time it is set), that firing's time, and the last firing it skipped.
 */
const EntrySchema = z.object({ schedule: ScheduleSchema, arming: z.string(), next: z.iso.datetime(), lastSkipped: SkippedFiringSchema.nullable().default(null) });
type Entry = z.infer<typeof EntrySchema>;

const ENTRY = 'entry';
/** The last run a firing started, and its drive's invocation: kept when the schedule is removed, so one set again under its id does not overlap it. */
const LAST_RUN = 'lastRun';
const LastRunSchema = z.object({ runId: z.string(), invocationId: z.string().regex(/^inv_[0-9A-Za-z]+$/) });
/** The time of the last change a desk made to a schedule (set or removed): an older one sent again is refused. */
const LAST_CHANGE = 'lastChange';
/** How a run the object drove ended: a drive sent again under its id is not driven twice. */
const ENDED = 'ended';
/** What a desk lists of a run: its goal and where it came from, kept as the drive begins. */
const ABOUT = 'about';
/** Why a drive was given up (refused, or failing past its retries): kept, as Restate forgets a failed invocation. */
const GIVEN_UP = 'givenUp';
const AboutSchema = DriveSchema.pick({ scheduleId: true, firedAt: true }).extend({ goal: z.string() });

/** A change to a schedule newer than the last one this object took, noted; a terminal refusal otherwise. */
async function takeChange(ctx: restate.ObjectContext, at: string): Promise<void> {
  const last = await ctx.get<string>(LAST_CHANGE);
  if (!isNewer(at, last)) throw new restate.TerminalError(`Refused: a change of schedule ${ctx.key} made at ${at} is not newer than the last one taken (${last}); a message sent again is not taken twice.`);
  ctx.set(LAST_CHANGE, at);
}

function readableCron(cron: string): void {
  try {
    checkCron(cron);
  } catch (error) {
    throw new restate.TerminalError((error as Error).message);
  }
}

/** The next firing after now, as a delayed call to `fire`: the time and the delay are journaled, so a replay sends the same call. */
async function arm(ctx: restate.ObjectContext, driver: RunDriver, cron: string, arming: string): Promise<string> {
  const { next, delayMs } = await ctx.run('next firing', () => {
    const now = driver.now();
    const at = nextFiring(cron, now);
    return { next: at.toISOString(), delayMs: Math.max(0, at.getTime() - now.getTime()) };
  });
  ctx.genericSend({ service: SCHEDULE_SERVICE, method: 'fire', key: ctx.key, parameter: { arming, firedAt: next }, inputSerde: restate.serde.json, delay: delayMs });
  return next;
}

/** A query's filter on one run's key, when one is named. */
const oneKey = (column: string, runId: string | undefined) => (runId === undefined ? '' : ` AND ${column} = ${sqlRunId(runId)}`);

/** Whether invocations the filter names are under way or wait for a worker, as the cluster lists them. */
async function underWay(cluster: RestateCluster, filter: string, signal: AbortSignal): Promise<boolean> {
  return (await cluster.query(`SELECT status FROM sys_invocation WHERE ${filter} AND status <> 'completed'`, z.object({ status: z.string() }), signal)).length > 0;
}

/** Whether a drive of the run is under way or waits for a worker. */
export function driveUnderWay(cluster: RestateCluster, runId: string, signal: AbortSignal): Promise<boolean> {
  return underWay(cluster, `target_service_name = '${RUN_SERVICE}' AND target_handler_name = 'drive'${oneKey('target_service_key', runId)}`, signal);
}

/** How many times a firing asks the cluster whether the previous run still goes before it starts the next one all the same. */
const OVERLAP_CHECK_ATTEMPTS = 3;

/**
 * Whether the drive the schedule's last firing sent still goes: that invocation, by its id (another
 * drive of the same run, sent through the ingress by anyone, holds nothing back). A cluster that
 * cannot say does not hold the schedule back: a firing is not lost to it.
 */
async function stillGoing(ctx: restate.ObjectContext, cluster: RestateCluster, invocationId: string): Promise<boolean> {
  return ctx.run('previous run still going', () => underWay(cluster, `id = '${invocationId}'`, ctx.request().attemptCompletedSignal), { maxRetryAttempts: OVERLAP_CHECK_ATTEMPTS }).catch((error: unknown) => {
    if (error instanceof restate.CancelledError || !(error instanceof restate.TerminalError)) throw error;
    return false;
  });
}

/**
 * A firing: nothing while the cluster's emergency stop is latched; a note, and no run, while the
 * schedule's previous run still goes (a schedule's runs never overlap); otherwise a new run (its id
 * journaled, its drive signed by this worker).
 */
async function takeFiring(ctx: restate.ObjectContext, worker: RunWorker, entry: Entry, firedAt: string): Promise<Entry['lastSkipped']> {
  if ((await latchIn(ctx)).latched) return entry.lastSkipped;
  const last = LastRunSchema.safeParse(await ctx.get(LAST_RUN));
  if (last.success && (await stillGoing(ctx, worker.cluster, last.data.invocationId))) return { firedAt, runId: last.data.runId };
  const runId = ctx.rand.uuidv4();
  const { cron: _cron, ...order } = entry.schedule;
  const drive = signed(worker.secret, DRIVE, runId, { scheduleId: ctx.key, firedAt, order });
  const sent = ctx.genericSend({ service: RUN_SERVICE, method: 'drive', key: runId, parameter: drive, inputSerde: restate.serde.json });
  ctx.set<z.infer<typeof LastRunSchema>>(LAST_RUN, { runId, invocationId: await sent.invocationId });
  return entry.lastSkipped;
}

/**
 * Schedules: `set` keeps a signed schedule and arms its next firing; each firing is taken (see
 * `takeFiring`) and arms the one after. Each `set` makes a new
 * arming, so a firing armed for an older version, or before a removal, finds it gone and does nothing.
 */
function scheduleObject(worker: RunWorker) {
  return restate.object({
    name: SCHEDULE_SERVICE,
    handlers: {
      set: async (ctx: restate.ObjectContext, input: unknown): Promise<ScheduleState> => {
        const { at, ...schedule } = verified(worker.secret, SET, ctx.key, input, SetScheduleSchema, 'a schedule');
        readableCron(schedule.cron);
        await takeChange(ctx, at);
        const arming = ctx.rand.uuidv4();
        const next = await arm(ctx, worker.driver, schedule.cron, arming);
        const lastSkipped = EntrySchema.safeParse(await ctx.get(ENTRY)).data?.lastSkipped ?? null;
        ctx.set<Entry>(ENTRY, { schedule, arming, next, lastSkipped });
        return { id: ctx.key, schedule, next, lastSkipped };
      },
      fire: restate.handlers.object.exclusive({ ingressPrivate: true }, async (ctx: restate.ObjectContext, input: unknown): Promise<void> => {
        const firing = FiringSchema.safeParse(input);
        const entry = EntrySchema.safeParse(await ctx.get(ENTRY));
        if (!firing.success || !entry.success || entry.data.arming !== firing.data.arming) return;
        const lastSkipped = await takeFiring(ctx, worker, entry.data, firing.data.firedAt);
        // The schedule goes on from its next firing, whatever this one did.
        const next = await arm(ctx, worker.driver, entry.data.schedule.cron, entry.data.arming);
        ctx.set<Entry>(ENTRY, { ...entry.data, lastSkipped, next });
      }),
      remove: async (ctx: restate.ObjectContext, input: unknown): Promise<boolean> => {
        const { at } = verified(worker.secret, REMOVE, ctx.key, input, RemoveScheduleSchema, 'a removal');
        await takeChange(ctx, at);
        const had = (await ctx.get(ENTRY)) !== null;
        ctx.clear(ENTRY);
        return had;
      },
    },
  });
}

/**
 * Runs: one per key, the run id, driven once: in one journaled step, so a worker that dies leaves it
 * to another, which goes on with it; a drive sent again after the run ended gets how it ended.
 */
function runObject(worker: RunWorker) {
  return restate.object({
    name: RUN_SERVICE,
    handlers: {
      drive: async (ctx: restate.ObjectContext, input: unknown): Promise<RunStatus> => {
        const { order, scheduleId, firedAt } = verified(worker.secret, DRIVE, ctx.key, input, DriveSchema, 'a run order');
        const ended = await ctx.get<RunStatus>(ENDED);
        if (ended !== null) return ended;
        ctx.set<z.infer<typeof AboutSchema>>(ABOUT, { goal: order.goal, scheduleId, firedAt });
        if ((await latchIn(ctx)).latched) {
          ctx.set<RunStatus>(ENDED, 'stopped');
          return 'stopped';
        }
        // The run's log goes once no worker has sent to it for as long as it is kept (never while the run goes, however it ends).
        clearLater(ctx);
        const status = await ctx.run('run', () => worker.driver.drive(ctx.key, { order, scheduleId, firedAt }, ctx.request().attemptCompletedSignal), { maxRetryAttempts: DRIVE_ATTEMPTS }).catch((error: unknown) => {
          if (error instanceof restate.TerminalError) ctx.set(GIVEN_UP, error.message);
          throw error;
        });
        ctx.set(ENDED, status);
        return status;
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
  return rows
    .flatMap((row) => {
      const entry = EntrySchema.safeParse(JSON.parse(row.value_utf8));
      return entry.success ? [{ id: row.service_key, schedule: entry.data.schedule, next: entry.data.next, lastSkipped: entry.data.lastSkipped }] : [];
    })
    .sort((a, b) => a.id.localeCompare(b.id));
}

const StateRowSchema = z.object({ service_key: z.string(), key: z.string(), value_utf8: z.string() });
/** An invocation as the admin API lists it (a column that is null is left out of its row). */
const InvocationRowSchema = z.object({ target_service_key: z.string(), status: z.string(), completion_result: z.string().nullish(), completion_failure: z.string().nullish(), created_at: z.string() });

/** The runs the cluster's workers drive or drove (or only run `runId`), latest first, read from its state and invocations through the admin API. */
export async function listClusterRuns(cluster: RestateCluster, signal: AbortSignal, runId?: string): Promise<ClusterRun[]> {
  const state = await cluster.query(`SELECT service_key, key, value_utf8 FROM state WHERE service_name = '${RUN_SERVICE}'${oneKey('service_key', runId)}`, StateRowSchema, signal);
  const invocations = await cluster.query(
    `SELECT target_service_key, status, completion_result, completion_failure, created_at FROM sys_invocation WHERE target_service_name = '${RUN_SERVICE}' AND target_handler_name = 'drive'${oneKey('target_service_key', runId)} ORDER BY created_at`,
    InvocationRowSchema,
    signal,
  );
  // The latest drive of each run (a run sent again is one more row).
  const drives = new Map(invocations.map((row) => [row.target_service_key, row]));
  const kept = (runId: string, key: string) => parseJsonOrUndefined(state.find((row) => row.service_key === runId && row.key === key)?.value_utf8 ?? '');
  return state
    .flatMap((row) => {
      const about = row.key === ABOUT ? AboutSchema.safeParse(parseJsonOrUndefined(row.value_utf8)) : null;
      if (!about?.success) return [];
      const drive = drives.get(row.service_key);
      const run: ClusterRun = { runId: row.service_key, ...about.data, ...standingOf(RunStatusSchema.safeParse(kept(row.service_key, ENDED)).data ?? null, z.string().safeParse(kept(row.service_key, GIVEN_UP)).data ?? null, drive) };
      return [{ run, at: drive?.created_at ?? about.data.firedAt ?? '' }];
    })
    .sort((a, b) => b.at.localeCompare(a.at))
    .map(({ run }) => run);
}

/** How a run stands: ended as its drive kept it, given up (kept so, or its drive failed: killed by the cluster's stop), or under way. */
function standingOf(ended: RunStatus | null, givenUp: string | null, drive: z.infer<typeof InvocationRowSchema> | undefined): Pick<ClusterRun, 'state' | 'status' | 'problem'> {
  if (ended !== null) return { state: 'ended', status: ended, problem: null };
  if (givenUp !== null) return { state: 'given_up', status: null, problem: givenUp };
  if (drive?.completion_result === 'failure') return { state: 'given_up', status: null, problem: drive.completion_failure ?? 'Its drive failed.' };
  return { state: 'under_way', status: null, problem: null };
}

/** A name for a schedule the operator did not name. */
export function newScheduleId(): string {
  return `schedule-${randomUUID().slice(0, 8)}`;
}

/** A schedule set on the cluster (a new one, or a new version of one): its next firing. */
export function setSchedule(cluster: RestateCluster, secret: string, id: string, schedule: Schedule, signal: AbortSignal): Promise<ScheduleState> {
  return cluster.call(`${SCHEDULE_SERVICE}/${encodeURIComponent(id)}/set`, signed(secret, SET, id, { ...schedule, at: new Date().toISOString() }), randomUUID(), ScheduleStateSchema, signal);
}

/** Sends a run to the cluster under a new id (`run --detach`): a worker drives it, whether or not this desk stays. */
export async function dispatchRun(cluster: RestateCluster, secret: string, order: RunOrder, signal: AbortSignal): Promise<string> {
  const runId = randomUUID();
  await cluster.send(`${RUN_SERVICE}/${runId}/drive`, signed(secret, DRIVE, runId, { scheduleId: null, firedAt: null, order }), runId, signal);
  return runId;
}

/** Whether there was such a schedule; its armed firing finds it gone and starts nothing. */
export function removeSchedule(cluster: RestateCluster, secret: string, id: string, signal: AbortSignal): Promise<boolean> {
  return cluster.call(`${SCHEDULE_SERVICE}/${encodeURIComponent(id)}/remove`, signed(secret, REMOVE, id, { remove: id, at: new Date().toISOString() }), randomUUID(), z.boolean(), signal);
}
