import { resolve } from 'node:path';
import { sleep } from '../../shared/abort';
import { ArchonError } from '../../shared/errors';
import { resolveModelUrl } from '../../shared/model-presets';
import type { ApprovalDecision } from '../../shared/schemas/approval';
import type { RunEvent } from '../../shared/schemas/events';
import type { RunOptions } from '../../shared/schemas/run';
import { clusterRunStanding, RunOrderOptionsSchema, type ClusterRun, type RunOrder, type RunOrderApprove, type Schedule, type ScheduleState } from '../../shared/schemas/run-order';
import { clusterSecret, RestateCluster, sqlRunId } from '../../core/restate/restate-cluster';
import { answerClusterApproval, pendingClusterApprovals } from '../../core/restate/cluster-approvals';
import { checkClusterForRun } from '../../core/restate/cluster-stop';
import { readRunLog, stopHeldRun } from '../../core/restate/run-log';
import { dispatchRun, driveUnderWay, listClusterRuns, listSchedules, newScheduleId, removeSchedule, setSchedule } from '../../core/restate/run-service';
import { RUN_SERVICE, SCHEDULE_SERVICE } from '../../core/restate/service-names';
import type { ArchonRuntime } from '../../core/runtime';
import { checkCron } from '../../core/schedule/cron';
import { describeEvent } from '../../shared/event-lines';
import { RESTATE_DEFAULTS } from './command-flags';
import { EXIT_BY_STATUS } from './run-output';
import { terminalText } from './terminal-text';

export interface ClusterFlags {
  restateIngress?: string;
  restateAdmin?: string;
  clusterSecretFile?: string;
}

/** What an order to the cluster takes from the command line (`schedule add`, `run --detach`). */
export interface OrderFlags extends ClusterFlags {
  approve?: RunOrderApprove | 'prompt';
  concurrency?: number;
  maxIterations?: number;
  /** False with `--no-memory`. */
  memory?: boolean;
  embeddingModel?: string;
  modelUrl?: string;
  model?: string;
  policy?: RunOptions['policy'];
  maxTokens?: number;
  maxCost?: number;
  maxSteps?: number;
  verify?: RunOptions['verification'];
  acceptGaps?: boolean;
  workspace?: string;
  json?: boolean;
}

export interface ScheduleAddFlags extends OrderFlags {
  cron: string;
  id?: string;
}

const APPROVALS: Record<RunOrderApprove, string> = { auto: 'yes', deny: 'no', desk: 'archon approve' };

/** How long the cluster may take to answer a schedule command. */
const COMMAND_TIMEOUT_MS = 90_000;

function clusterOf(flags: ClusterFlags): RestateCluster {
  return new RestateCluster({ ingress: flags.restateIngress ?? RESTATE_DEFAULTS.ingress, admin: flags.restateAdmin ?? RESTATE_DEFAULTS.admin });
}

function secretOf(flags: ClusterFlags, workspace: string): string {
  if (!flags.clusterSecretFile) throw new ArchonError('CONFIG_INVALID', 'This needs --cluster-secret-file: the file of the secret the workers check what the desk sends against (see docs/scale-out.md).');
  return clusterSecret(resolve(flags.clusterSecretFile), workspace);
}

/** The order the flags describe; only what was given, the worker's Settings give the rest. Nobody is at a terminal to answer a prompt. */
function orderFrom(goal: string, flags: OrderFlags): RunOrder {
  if (flags.approve === 'prompt') throw new ArchonError('CONFIG_INVALID', 'A worker drives this run with nobody at a terminal: answer its approvals with --approve auto, deny, or desk (then archon approve).');
  const given = {
    modelUrl: flags.modelUrl === undefined ? undefined : resolveModelUrl(flags.modelUrl),
    model: flags.model,
    policy: flags.policy,
    maxTokens: flags.maxTokens,
    maxCostUsd: flags.maxCost,
    maxPlanSteps: flags.maxSteps,
    verification: flags.verify,
    acceptGaps: flags.acceptGaps,
    workspace: flags.workspace === undefined ? undefined : resolve(flags.workspace),
    concurrency: flags.concurrency,
    maxIterations: flags.maxIterations,
    memory: flags.memory === false ? false : undefined,
    embeddingModel: flags.embeddingModel,
  };
  const options = RunOrderOptionsSchema.parse(Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined)));
  return { goal, approve: flags.approve ?? 'deny', options };
}

/** The schedule the flags describe. */
function scheduleFrom(goal: string, flags: ScheduleAddFlags): Schedule {
  checkCron(flags.cron);
  return { ...orderFrom(goal, flags), cron: flags.cron.trim() };
}

/**
 * `archon run --detach --engine restate`: the run goes to the cluster, a worker drives it, and this
 * command ends once it is accepted; `archon inbox` on the worker's data dir shows it when it ends or waits.
 */
export async function detachRunFromCli(goal: string, flags: OrderFlags): Promise<number> {
  const order = orderFrom(goal, flags);
  const secret = secretOf(flags, order.options.workspace ?? resolve('.'));
  const cluster = clusterOf(flags);
  const signal = AbortSignal.timeout(COMMAND_TIMEOUT_MS);
  await checkClusterForRun(cluster, signal, RUN_SERVICE);
  const runId = await dispatchRun(cluster, secret, order, signal);
  process.stdout.write(flags.json ? `${JSON.stringify({ runId })}\n` : `Run ${runId} sent to the Restate cluster at ${cluster.address.ingress}; a worker drives it, with or without this terminal. \`archon follow ${runId}\` follows it from any desk; \`archon inbox\` on the worker's data dir shows it when it ends or waits for you.\n`);
  return 0;
}

/** `archon schedule add`: the schedule is kept by the cluster, whose workers fire it; prints its next firing. */
export async function addScheduleFromCli(goal: string, flags: ScheduleAddFlags): Promise<number> {
  const schedule = scheduleFrom(goal, flags);
  const secret = secretOf(flags, schedule.options.workspace ?? resolve('.'));
  const id = flags.id ?? newScheduleId();
  const cluster = clusterOf(flags);
  const signal = AbortSignal.timeout(COMMAND_TIMEOUT_MS);
  await cluster.check(SCHEDULE_SERVICE, signal);
  const state = await setSchedule(cluster, secret, id, schedule, signal);
  process.stdout.write(flags.json ? `${JSON.stringify(state)}\n` : `Schedule ${state.id}: next run at ${state.next} (cron "${state.schedule.cron}", approvals: ${APPROVALS[state.schedule.approve]}): ${terminalText(goal)}\n`);
  return 0;
}

function scheduleLine({ id, schedule, next, lastSkipped }: ScheduleState): string {
  const skipped = lastSkipped ? `  (skipped ${lastSkipped.firedAt}: run ${lastSkipped.runId} was still going)` : '';
  return `${id}  next ${next}  "${schedule.cron}"  ${terminalText(schedule.goal, { keepNewlines: false })}${skipped}\n`;
}

/** `archon schedule list`: each schedule the cluster keeps, with its next firing and the last firing it skipped. */
export async function listSchedulesFromCli(flags: ClusterFlags & { json?: boolean }): Promise<number> {
  const schedules = await listSchedules(clusterOf(flags), AbortSignal.timeout(COMMAND_TIMEOUT_MS));
  for (const state of schedules) process.stdout.write(flags.json ? `${JSON.stringify(state)}\n` : scheduleLine(state));
  if (schedules.length === 0 && !flags.json) process.stdout.write('No schedules.\n');
  return 0;
}

/** `archon schedule rm`: exit 1 when there was no such schedule. */
export async function removeScheduleFromCli(id: string, flags: ClusterFlags): Promise<number> {
  const removed = await removeSchedule(clusterOf(flags), secretOf(flags, resolve('.')), id, AbortSignal.timeout(COMMAND_TIMEOUT_MS));
  process.stdout.write(removed ? `Removed schedule ${id}; it starts no more runs.\n` : `No schedule ${id} on this cluster (archon schedule list shows those there are).\n`);
  return removed ? 0 : 1;
}

/** `archon inbox`: runs schedules started that ended or wait for a person (`archon approvals` lists what they ask). */
export function inboxFromCli(runtime: ArchonRuntime, flags: { json?: boolean }): number {
  const items = runtime.store.runs.inbox(200);
  for (const item of items) process.stdout.write(flags.json ? `${JSON.stringify(item)}\n` : `${item.run.id}  ${(item.waiting ? 'waits for you' : item.run.status).padEnd(19)}  ${item.firedAt ?? item.run.createdAt}  ${item.scheduleId ?? '(--detach)'}  ${terminalText(item.run.goal, { keepNewlines: false })}\n`);
  if (items.length === 0 && !flags.json) process.stdout.write('The inbox is empty: no run a worker drove has ended or waits.\n');
  return 0;
}

/** `archon cluster-runs`: the runs the cluster's workers drive or drove (detached and scheduled), from any desk, latest first. */
export async function listClusterRunsFromCli(flags: ClusterFlags & { json?: boolean }): Promise<number> {
  const runs = await listClusterRuns(clusterOf(flags), AbortSignal.timeout(COMMAND_TIMEOUT_MS));
  for (const run of runs) {
    const line = `${run.runId}  ${clusterRunStanding(run).padEnd(19)}  ${run.scheduleId ?? '(--detach)'}  ${terminalText(run.goal, { keepNewlines: false })}${run.problem ? `\n    ${terminalText(run.problem, { keepNewlines: false })}` : ''}`;
    process.stdout.write(flags.json ? `${JSON.stringify(run)}\n` : `${line}\n`);
  }
  if (runs.length === 0 && !flags.json) process.stdout.write('No run on this cluster: none was sent with --detach or fired by a schedule (or they are older than the cluster keeps).\n');
  return 0;
}

/** How long `archon stop` waits for a run on the cluster to end once asked, and how often it looks: its worker hears the stop within a second, then winds down. */
const STOP_WAIT_MS = 60_000;
const STOP_POLL_MS = 500;

/**
 * `archon stop RUN_ID` with a cluster's secret: asks whoever holds that one run on the cluster (or
 * takes it up next) to stop it, then waits for its end. Exit as `archon stop`: 0 stopped, 1 not
 * running, not ended in time, or the cluster not answering (said), 2 unknown to the cluster.
 */
export async function stopClusterRunFromCli(runId: string, flags: ClusterFlags, signal: AbortSignal): Promise<number> {
  const cluster = clusterOf(flags);
  const secret = secretOf(flags, resolve('.'));
  sqlRunId(runId);
  const bounded = () => AbortSignal.any([signal, AbortSignal.timeout(COMMAND_TIMEOUT_MS)]);
  const standing = async () => (await listClusterRuns(cluster, bounded(), runId))[0];
  let asked = false;
  try {
    const before = await standing();
    if (!before) {
      process.stderr.write(`archon: no run ${runId} on the Restate cluster at ${cluster.address.ingress} (archon cluster-runs lists those there are).\n`);
      return 2;
    }
    if (before.state !== 'under_way') {
      process.stderr.write(`archon: run ${runId} is not running on the cluster (${clusterRunStanding(before)}); there is nothing to stop.\n`);
      return 1;
    }
    const taken = await stopHeldRun(cluster, secret, runId, 'the operator (archon stop)', bounded());
    asked = true;
    process.stdout.write(taken ? `Asked run ${runId} on the Restate cluster to stop; waiting for it to end…\n` : `Asked run ${runId} on the Restate cluster to stop: no worker has taken it up yet, it stops as one does; waiting…\n`);
    for (let waited = 0; waited <= STOP_WAIT_MS; waited += STOP_POLL_MS) {
      // A read that fails while the run winds down is read again: the stop is asked already.
      const run = await standing().catch(() => undefined);
      if (run && run.state !== 'under_way') {
        process.stdout.write(`Run ${runId} ${clusterRunStanding(run)} on the cluster. The emergency stop was not used; other runs go on.\n`);
        return run.status === 'stopped' ? 0 : 1;
      }
      await sleep(STOP_POLL_MS, signal);
    }
    process.stdout.write(`Run ${runId} has not ended yet; the stop stays asked of whichever worker holds it. \`archon cluster-runs\` shows when it ends.\n`);
    return 1;
  } catch (error) {
    const what = signal.aborted ? 'Stopped waiting' : `The Restate cluster at ${cluster.address.ingress} did not answer: ${ArchonError.isInstance(error) ? error.message : String(error)}`;
    process.stderr.write(`archon: ${what}; ${asked ? 'the stop stays asked on the cluster' : 'no stop was asked'}.\n`);
    return 1;
  }
}

/** How often `archon follow` asks the cluster what the run did since. */
const FOLLOW_EVERY_MS = 1000;
/** How long `archon follow` waits for a run the cluster does not know (one just sent) before it says there is no such run. */
const FOLLOW_APPEAR_MS = 30_000;
/** How long `archon follow` waits for the last events of a run whose drive ended without its end kept (killed by a stop). */
const FOLLOW_LAST_EVENTS_MS = 10_000;

const LAST_EVENTS = new Set<RunEvent['type']>(['run.completed', 'run.failed', 'run.stopped', 'run.paused']);

/** The exit code a run's last event names, for a run whose end the cluster did not keep. */
function exitOfLast(event: RunEvent): number {
  if (event.type === 'run.completed') return event.gaps && event.gaps.length > 0 ? (EXIT_BY_STATUS.completed_with_gaps ?? 7) : 0;
  return EXIT_BY_STATUS[event.type === 'run.stopped' ? 'stopped' : event.type === 'run.paused' ? 'paused' : 'failed'] ?? 1;
}

function printFollowed(event: RunEvent, json: boolean): void {
  if (json) process.stdout.write(`${JSON.stringify(event)}\n`);
  else {
    const line = describeEvent(event);
    if (line) process.stderr.write(`${terminalText(line)}\n`);
    if (event.type === 'run.completed') process.stdout.write(`${terminalText(event.answer)}\n`);
  }
}

/** How a followed run ends the command: as the cluster kept its end, else as its last event says (with why its drive was given up). */
function followedEnd(run: ClusterRun | undefined, last: RunEvent | null, heardAny: boolean): number {
  if (run?.state === 'ended' && run.status !== null) {
    if (last === null) process.stderr.write(heardAny ? `archon: run ${run.runId} ended ${run.status} on the cluster; what it did last is on the data dir of the worker that drove it (archon runs there).\n` : `archon: run ${run.runId} ended ${run.status} on the cluster, which keeps no events of it (a worker sends them as it drives a run; the cluster keeps them 14 days). What it did is on the data dir of the worker that drove it (archon runs there).\n`);
    return EXIT_BY_STATUS[run.status] ?? 1;
  }
  if (run?.state === 'given_up' && last === null) process.stderr.write(`archon: run ${run.runId} was given up on the cluster: ${terminalText(run.problem ?? 'no reason kept')}\n`);
  return last === null ? 1 : exitOfLast(last);
}

/** What `archon follow` reads at each ask: how the cluster lists the run, whether a drive of it still goes, and its events since. */
async function followStep(cluster: RestateCluster, runId: string, seq: number, signal: AbortSignal) {
  // Whether a drive goes on, asked first: one that ends after this keeps the run's end before it ends, so the run's state read next has it.
  const driving = await driveUnderWay(cluster, runId, signal);
  const [run] = await listClusterRuns(cluster, signal, runId);
  return { run, driving, events: await readRunLog(cluster, runId, seq, signal) };
}

/**
 * `archon follow`: a run the cluster's workers drive, from any desk: its events from the first, as
 * `archon run` prints them, until it ends; then its exit code. The run goes on whether or not anyone follows it.
 */
export async function followFromCli(runId: string, flags: ClusterFlags & { json?: boolean }, signal: AbortSignal): Promise<number> {
  const cluster = clusterOf(flags);
  let seq = 0;
  let last: RunEvent | null = null;
  let heardAt = Date.now();
  let waitingNoted = false;
  try {
    while (!signal.aborted) {
      const { run, driving, events } = await followStep(cluster, runId, seq, AbortSignal.any([signal, AbortSignal.timeout(COMMAND_TIMEOUT_MS)]));
      for (const event of events) printFollowed(event, flags.json ?? false);
      seq = events.at(-1)?.seq ?? seq;
      last = events.findLast((event) => LAST_EVENTS.has(event.type)) ?? last;
      if (events.length > 0) {
        heardAt = Date.now();
        continue;
      }
      // Its worker sends the last events before the run's end is kept: none new once it is means none are left.
      if (run?.state === 'ended') return followedEnd(run, last, seq > 0);
      if (!driving && run === undefined && seq === 0) {
        if (Date.now() - heardAt > FOLLOW_APPEAR_MS) {
          process.stderr.write(`archon: no run ${runId} on the Restate cluster at ${cluster.address.ingress} (archon cluster-runs lists those there are).\n`);
          return 2;
        }
      } else if (!driving && (last !== null || seq === 0 || Date.now() - heardAt > FOLLOW_LAST_EVENTS_MS)) {
        // No drive goes on and the cluster kept no end (the cluster's stop killed it): the worker may still send the run's last events.
        return followedEnd(run, last, seq > 0);
      } else if (driving && run === undefined && !waitingNoted && !flags.json) {
        waitingNoted = true;
        process.stderr.write(`Run ${runId} waits for a worker of the cluster to take it.\n`);
      }
      await sleep(FOLLOW_EVERY_MS, signal);
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  }
  process.stderr.write(`Stopped following run ${runId}; it goes on on the cluster.\n`);
  return 130;
}

/** `archon approvals`: what scheduled runs ask a person, waiting on the cluster, oldest first. */
export async function listClusterApprovalsFromCli(flags: ClusterFlags & { json?: boolean }): Promise<number> {
  const pending = await pendingClusterApprovals(clusterOf(flags), AbortSignal.timeout(COMMAND_TIMEOUT_MS));
  for (const { key, request } of pending) {
    process.stdout.write(flags.json ? `${JSON.stringify({ key, request })}\n` : `${key}  ${request.kind.padEnd(14)}  run ${request.runId.slice(0, 8)}  ${terminalText(request.summary, { keepNewlines: false })}\n`);
  }
  if (pending.length === 0 && !flags.json) process.stdout.write('No approval waits on this cluster.\n');
  return 0;
}

export interface ApproveFlags extends ClusterFlags {
  reject?: boolean;
  feedback?: string;
}

/** `archon approve ID [--reject --feedback TEXT]`: a person's answer to a scheduled run's approval, signed with the cluster's secret. */
export async function answerClusterApprovalFromCli(key: string, flags: ApproveFlags): Promise<number> {
  const decision: ApprovalDecision = flags.reject ? { verdict: 'reject', feedback: flags.feedback ?? 'Rejected with archon approve.' } : { verdict: 'approve' };
  await answerClusterApproval(clusterOf(flags), secretOf(flags, resolve('.')), key, decision, AbortSignal.timeout(COMMAND_TIMEOUT_MS));
  process.stdout.write(flags.reject ? `Rejected ${key}; the run is told why.\n` : `Approved ${key}; the run goes on.\n`);
  return 0;
}
