import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { startModelServer } from '../test/kit/scripted-model-server';
import { seededRandom } from '../test/support/crash-scenario';
import { CRASH_SCENARIOS, type CrashScenario } from './crash-scenarios';
import { line, percentile } from './support';

const ARCHON_BIN = fileURLToPath(new URL('../bin/archon.mjs', import.meta.url));
/** The first scenario's seed (the loop's seed before it had scenarios); each next scenario's is one more. */
const BASE_SEED = Number(process.env.ARCHON_BENCH_CRASH_SEED ?? 20261123);
/** Kills per iteration at most (the run, then resumes), and resumes to the end at most. */
const MAX_KILLS_PER_ITERATION = 3;
const MAX_FINAL_RESUMES = 4;
/** A process left to run to its end that takes longer than this is killed and counted as hung. */
const HANG_MS = 90_000;
const ORPHAN_GRACE_MS = 2_000;
const DEFECTS_SHOWN = 3;

interface Outcome {
  status: number | null;
  stdout: string;
  stderr: string;
}

interface ArchonProcess {
  pid: number;
  kill(): void;
  done: Promise<Outcome>;
  /** Settles at the first line on stdout (with --json, the run's first event: it is stored), or at the end. */
  firstEvent: Promise<void>;
}

/** `archon …` leading a process group of its own, so what it leaves behind can be found by group. */
function spawnArchon(args: string[]): ArchonProcess {
  const child = spawn(process.execPath, [ARCHON_BIN, ...args], { env: { ...process.env, OPENAI_API_KEY: '' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  let sawEvent = () => {};
  const firstEvent = new Promise<void>((resolve) => (sawEvent = resolve));
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
    if (stdout.includes('\n')) sawEvent();
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const done = new Promise<Outcome>((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
  void done.then(sawEvent);
  return { pid: child.pid ?? -1, kill: () => child.kill('SIGKILL'), done, firstEvent };
}

/** ARCHON_BENCH_CRASH_ITERATIONS overrides every scenario's iteration count (a quick look, or a longer soak). */
const iterationsOf = (scenario: CrashScenario) => Number(process.env.ARCHON_BENCH_CRASH_ITERATIONS) || scenario.iterations;

const delay = (ms: number) => new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), ms));

/** What the promise settles to, or 'timeout' once `ms` have passed (the timer cleared either way). */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs a process to its end, or kills it past HANG_MS (then its status is null and `hung` is set). */
async function toEnd(process: ArchonProcess): Promise<Outcome & { hung: boolean; ms: number }> {
  const started = performance.now();
  const outcome = await within(process.done, HANG_MS);
  if (outcome !== 'timeout') return { ...outcome, hung: false, ms: performance.now() - started };
  process.kill();
  return { ...(await process.done), hung: true, ms: performance.now() - started };
}

interface ProcessEntry {
  pid: number;
  pgid: number;
  args: string;
  cwd: string;
}

/** Every live process (zombies left out) with its process group, command line and folder. */
function processTable(): ProcessEntry[] {
  const entries: ProcessEntry[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z') continue;
      const args = readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
      let cwd = '';
      try {
        cwd = readlinkSync(`/proc/${name}/cwd`);
      } catch {
        // Another user's process, or it just ended.
      }
      entries.push({ pid: Number(name), pgid: Number(fields[2]), args, cwd });
    } catch {
      // It ended while the table was read.
    }
  }
  return entries;
}

/**
 * What is still running of an iteration: any process in a group an `archon` process led or a tool
 * process group the run recorded, or naming the iteration's folders. Waits a little for processes
 * already ending; what is left is killed by its id (and counted).
 */
export async function orphansOf(groups: ReadonlySet<number>, folders: readonly string[]): Promise<string[]> {
  const ours = (entry: ProcessEntry) => entry.pid !== process.pid && (groups.has(entry.pgid) || folders.some((folder) => entry.args.includes(folder) || entry.cwd.startsWith(folder)));
  let left: ProcessEntry[] = [];
  for (const deadline = Date.now() + ORPHAN_GRACE_MS; Date.now() < deadline; await delay(100)) {
    left = processTable().filter(ours);
    if (left.length === 0) return [];
  }
  for (const entry of left) {
    try {
      process.kill(entry.pid, 'SIGKILL');
    } catch {
      // It ended in between.
    }
  }
  return left.map((entry) => `pid ${entry.pid} (group ${entry.pgid}): ${entry.args.slice(0, 200)}`);
}

function openDb(dataDir: string): Database.Database | null {
  if (!existsSync(join(dataDir, 'archon.db'))) return null;
  // Read-write: a killed writer may leave a WAL that only a writer can recover.
  return new Database(join(dataDir, 'archon.db'), { fileMustExist: true });
}

/** The run the iteration started (not a sub-agent's), once it is stored. */
function rootRun(dataDir: string): { id: string; status: string } | null {
  const db = openDb(dataDir);
  if (!db) return null;
  try {
    return (db.prepare("SELECT id, status FROM runs WHERE json_extract(options_json, '$.parentRunId') IS NULL ORDER BY created_at LIMIT 1").get() as { id: string; status: string } | undefined) ?? null;
  } catch (error) {
    // Killed after the file was created and before its schema was committed: there is no run yet.
    if (/no such table/.test(String(error))) return null;
    throw error;
  } finally {
    db.close();
  }
}

/** Every run of a data dir (sub-agents' too) with its status and its last events, for a defect's report. */
function runsOf(dataDir: string): string[] {
  const db = openDb(dataDir);
  if (!db) return [];
  try {
    const runs = db.prepare("SELECT id, status, json_extract(options_json, '$.parentRunId') AS parent FROM runs ORDER BY created_at").all() as { id: string; status: string; parent: string | null }[];
    return runs.flatMap((run) => [
      `run ${run.id}${run.parent ? ` (child of ${run.parent.slice(0, 8)})` : ''}: ${run.status}`,
      ...(db.prepare('SELECT seq, type, ts, body_json AS body FROM events WHERE run_id = ? ORDER BY seq DESC LIMIT 8').all(run.id) as { seq: number; type: string; ts: string; body: string }[])
        .reverse()
        .map((event) => `  ${event.ts} #${event.seq} ${event.type} ${event.body.slice(0, 140)}`),
    ]);
  } finally {
    db.close();
  }
}

const OVER = new Set(['completed', 'completed_with_gaps', 'failed', 'stopped', 'rejected', 'budget_exhausted']);

/** The gap the outcome check states for an interrupted call that was not repeated (--approve auto answers uncertain_repeat no). */
const UNREPEATED_CALL = /may or may not have happened/;

interface EndEvent {
  error?: string;
  gaps?: string[];
}

/** The gaps a run ended on: those it completed with, or those its outcome check failed it for; null when it ended on none. */
function statedGaps(db: Database.Database, run: { id: string; status: string }): string[] | null {
  const last = (type: string): EndEvent => {
    const row = db.prepare('SELECT body_json AS body FROM events WHERE run_id = ? AND type = ? ORDER BY seq DESC LIMIT 1').get(run.id, type) as { body: string } | undefined;
    return row ? (JSON.parse(row.body) as EndEvent) : {};
  };
  if (run.status === 'completed_with_gaps') return last('run.completed').gaps ?? [];
  if (run.status !== 'failed') return null;
  const error = last('run.failed').error ?? '';
  const gaps = last('outcome.checked').gaps ?? [];
  return gaps.length > 0 && gaps.every((gap) => error.includes(gap)) ? gaps : null;
}

/** Whether the iteration's run ended failed on calls not repeated alone: the outcome check's gaps, unaccepted. */
function failedOnUnrepeatedCalls(dataDir: string): boolean {
  const run = rootRun(dataDir);
  const db = run?.status === 'failed' ? openDb(dataDir) : null;
  if (!run || !db) return false;
  try {
    const gaps = statedGaps(db, run) ?? [];
    return gaps.length > 0 && gaps.every((gap) => UNREPEATED_CALL.test(gap));
  } finally {
    db.close();
  }
}

/** A process's proper end: 0 completed, 7 completed with the gaps it accepted, or 1 for gaps of calls not repeated that it was not told to accept. */
function endedProperly(status: number | null, acceptGaps: boolean, dataDir: string): boolean {
  return status === 0 || status === 7 || (status === 1 && !acceptGaps && failedOnUnrepeatedCalls(dataDir));
}

interface Defect {
  iteration: number;
  what: string;
  around: string[];
}

interface Figures {
  iterations: number;
  kills: number;
  resumes: number;
  /** Runs stored before no kill: started again from the top (nothing to resume). */
  restarts: number;
  /** Runs that ended before their kill moment came. */
  unkilled: number;
  completedRuns: number;
  /** Runs that ended on gaps the outcome check stated, each a call interrupted and not repeated (completed_with_gaps, or failed where the gaps were not accepted). */
  gapRuns: number;
  /** Gaps runs ended on that are not calls left unrepeated: a crash should leave no other. */
  otherGaps: string[];
  /** Runs that ended completed (exit 0) while a call's outcome was unknown: a success that hides a gap. */
  silentSuccesses: number;
  effects: number;
  /** Effects of a run never killed that the ledger lacks at the end: a call whose outcome was unknown and not repeated. */
  missingEffects: number;
  repeats: { effect: string; times: number; asked: boolean }[];
  redoneSteps: string[];
  /** Interrupted calls a person (here the --approve auto rule) was asked to repeat, and how many of them got a yes. */
  uncertainRepeats: number;
  uncertainRepeatsApproved: number;
  childRuns: number;
  duplicateChildren: number;
  orphans: number;
  orphanGroupsKilled: number;
  resumeMs: number[];
  missingFromAudit: number;
  /** The last process of each iteration: its exit, and whether that is a proper end (see endedProperly). */
  finalExits: { status: number; proper: boolean }[];
  verifyExits: number[];
  unfinished: number;
  hung: number;
  crashes: string[];
  defects: Defect[];
  seconds: number;
}

/** A step's events and the run's resumptions, as lines to print beside a defect. */
function eventsAround(db: Database.Database, step: string | null): string[] {
  const rows = db
    .prepare(
      `SELECT r.id AS run, e.seq, e.type, e.ts, e.body_json AS body FROM events e JOIN runs r ON r.id = e.run_id
       WHERE (? IS NOT NULL AND json_extract(e.body_json, '$.stepId') = ?) OR e.type IN ('run.resumed', 'plan.revised', 'subagent.started', 'tool.orphan_killed', 'outcome.checked', 'run.completed')
       ORDER BY e.ts, e.seq`,
    )
    .all(step, step) as { run: string; seq: number; type: string; ts: string; body: string }[];
  return rows.slice(0, 40).map((row) => {
    const body = JSON.parse(row.body) as Record<string, unknown>;
    const detail = ['stepId', 'tool', 'status', 'callId', 'kind', 'reason'].flatMap((key) => (body[key] === undefined ? [] : [`${key}=${String(body[key]).slice(0, 60)}`])).join(' ');
    return `${row.ts} run ${row.run.slice(0, 8)} #${row.seq} ${row.type} ${detail}`;
  });
}

/** What the ledger and archon.db say about one finished iteration. */
function inspect(figures: Figures, iteration: number, dataDir: string, workspace: string, expected: readonly string[]): number[] {
  let ledger = '';
  try {
    ledger = readFileSync(join(workspace, 'ledger.txt'), 'utf8');
  } catch {
    // No effect was made.
  }
  const counts = new Map<string, number>();
  for (const effect of ledger.split('\n').filter(Boolean)) counts.set(effect, (counts.get(effect) ?? 0) + 1);
  figures.effects += counts.size;
  figures.missingEffects += expected.filter((effect) => !counts.has(effect)).length;
  const db = openDb(dataDir);
  if (!db) return [];
  try {
    const root = db.prepare("SELECT id, status FROM runs WHERE json_extract(options_json, '$.parentRunId') IS NULL ORDER BY created_at LIMIT 1").get() as { id: string; status: string } | undefined;
    if (root?.status === 'completed') figures.completedRuns++;
    const gaps = (root ? statedGaps(db, root) : null) ?? [];
    const otherGaps = gaps.filter((gap) => !UNREPEATED_CALL.test(gap));
    if (gaps.length > 0 && otherGaps.length === 0) figures.gapRuns++;
    figures.otherGaps.push(...otherGaps.map((gap) => `${gap.slice(0, 120)} (iteration ${iteration})`));
    const unknown = db.prepare("SELECT step_id AS step, tool FROM tool_calls WHERE json_extract(result_json, '$.metadata.outcome') = 'unknown'").all() as { step: string; tool: string }[];
    if (root?.status === 'completed' && unknown.length > 0) {
      figures.silentSuccesses++;
      const calls = unknown.map((call) => `${call.tool} in step ${call.step}`).join(', ');
      figures.defects.push({ iteration, what: `the run completed (exit 0) while its journal holds calls of unknown outcome: ${calls}`, around: eventsAround(db, unknown[0]?.step ?? null) });
    }
    const asked = db.prepare("SELECT step_id AS step, status FROM approvals WHERE kind = 'uncertain_repeat'").all() as { step: string | null; status: string }[];
    const approved = asked.filter((row) => row.status === 'approved' || row.status === 'edited');
    figures.uncertainRepeats += asked.length;
    figures.uncertainRepeatsApproved += approved.length;
    const askedSteps = new Set(approved.map((row) => row.step));
    for (const [effect, times] of counts) {
      if (times < 2) continue;
      const step = /^(?:E|MARK)-(.+)-\d+$/.exec(effect)?.[1] ?? null;
      const explained = askedSteps.has(step);
      figures.repeats.push({ effect: `${effect} (iteration ${iteration})`, times, asked: explained });
      figures.defects.push({ iteration, what: `effect ${effect} made ${times} times${explained ? ' (an uncertain_repeat was asked and approved for its step)' : ''}`, around: eventsAround(db, step) });
    }
    const redone = db
      .prepare("SELECT run_id AS run, json_extract(body_json, '$.stepId') AS step, count(*) AS n FROM events WHERE type = 'step.completed' GROUP BY run_id, step HAVING n > 1")
      .all() as { run: string; step: string; n: number }[];
    for (const row of redone) {
      figures.redoneSteps.push(row.step);
      figures.defects.push({ iteration, what: `step ${row.step} of run ${row.run} completed ${row.n} times`, around: eventsAround(db, row.step) });
    }
    const children = db
      .prepare("SELECT json_extract(options_json, '$.parentRunId') AS parent, json_extract(options_json, '$.parentStepId') AS step, count(*) AS n FROM runs WHERE parent IS NOT NULL GROUP BY parent, step")
      .all() as { parent: string; step: string; n: number }[];
    for (const row of children) {
      figures.childRuns += row.n;
      if (row.n < 2) continue;
      figures.duplicateChildren += row.n - 1;
      figures.defects.push({ iteration, what: `${row.n} child runs for sub-agent step ${row.step} of run ${row.parent}`, around: eventsAround(db, row.step) });
    }
    figures.orphanGroupsKilled += (db.prepare("SELECT count(*) AS n FROM events WHERE type = 'tool.orphan_killed'").get() as { n: number }).n;
    if (existsSync(join(dataDir, 'audit.db'))) {
      db.prepare('ATTACH DATABASE ? AS audit').run(join(dataDir, 'audit.db'));
      figures.missingFromAudit += (db.prepare('SELECT count(*) AS n FROM events e WHERE NOT EXISTS (SELECT 1 FROM audit.records r WHERE r.run_id = e.run_id AND r.event_seq = e.seq)').get() as { n: number }).n;
    }
    return (db.prepare('SELECT DISTINCT pgid FROM tool_processes').all() as { pgid: number }[]).map((row) => row.pgid);
  } finally {
    db.close();
  }
}

const CRASHED = /Unhandled|TypeError|ReferenceError|SqliteError|UNIQUE constraint|at .*\.js:\d+/;

/**
 * One scenario: each iteration starts `archon run`, kills it with SIGKILL at a seeded random moment
 * (and, half the time, the resume after it too, up to MAX_KILLS_PER_ITERATION kills), resumes the run
 * to its end with --accept-gaps (calls a kill cut short and --approve auto did not repeat are gaps),
 * then counts from the ledger, archon.db and the process table what went wrong.
 */
async function crashLoopScenario(scenario: CrashScenario, seed: number): Promise<Figures> {
  const started = performance.now();
  const random = seededRandom(seed);
  const server = await startModelServer({ reply: (request) => scenario.reply(request), latencyMs: 20 });
  const figures: Figures = {
    iterations: 0, kills: 0, resumes: 0, restarts: 0, unkilled: 0, completedRuns: 0, gapRuns: 0, otherGaps: [], silentSuccesses: 0, effects: 0, missingEffects: 0, repeats: [], redoneSteps: [], uncertainRepeats: 0, uncertainRepeatsApproved: 0, childRuns: 0, duplicateChildren: 0,
    orphans: 0, orphanGroupsKilled: 0, resumeMs: [], missingFromAudit: 0, finalExits: [], verifyExits: [], unfinished: 0, hung: 0, crashes: [], defects: [], seconds: 0,
  };
  const noteCrash = (iteration: number, outcome: Outcome) => {
    if (!CRASHED.test(outcome.stderr)) return;
    figures.crashes.push(outcome.stderr.slice(0, 2000));
    figures.defects.push({ iteration, what: 'a process printed a crash', around: outcome.stderr.split('\n').slice(0, 20) });
  };
  try {
    for (let iteration = 0; iteration < iterationsOf(scenario); iteration++) {
      figures.iterations++;
      const [dataDir, workspace, scratch] = [0, 1, 2].map(() => mkdtempSync(join(tmpdir(), 'archon-bench-crash-'))) as [string, string, string];
      const groups = new Set<number>();
      const common = ['--model-url', server.url, '--data-dir', dataDir, '--workspace', workspace, '--policy', 'permissive', '--approve', 'auto', '--concurrency', '2', '--json', ...scenario.flags(scratch)];
      let spawned = 0;
      const start = (acceptGaps: boolean): ArchonProcess & { resume: boolean; acceptGaps: boolean } => {
        const run = rootRun(dataDir);
        if (run) figures.resumes++;
        else if (spawned > 0) figures.restarts++;
        spawned++;
        const flags = acceptGaps ? [...common, '--accept-gaps'] : common;
        const child = spawnArchon(run ? ['resume', run.id, ...flags] : ['run', 'mark the ledger', ...flags]);
        groups.add(child.pid);
        return { ...child, resume: run !== null, acceptGaps };
      };
      try {
        let last: (Outcome & { hung: boolean; acceptGaps: boolean }) | null = null;
        for (let attempt = 0; attempt < MAX_KILLS_PER_ITERATION; attempt++) {
          // The process just killed may have ended the run first: there is nothing left to kill.
          if (OVER.has(rootRun(dataDir)?.status ?? '')) break;
          const [min, max] = scenario.killWindowMs;
          const child = start(false);
          const began = performance.now();
          const moment = min + random() * (max - min);
          if (scenario.killFrom === 'first-event') await within(child.firstEvent, HANG_MS);
          const outcome = await within(child.done, moment);
          if (outcome !== 'timeout') {
            // It ended before its kill moment: a resume that ran to its end is timed like the others.
            if (child.resume) figures.resumeMs.push(performance.now() - began);
            if (attempt === 0) figures.unkilled++;
            noteCrash(iteration, outcome);
            last = { ...outcome, hung: false, acceptGaps: child.acceptGaps };
            if (!endedProperly(outcome.status, child.acceptGaps, dataDir)) {
              const stored = rootRun(dataDir);
              figures.defects.push({ iteration, what: `archon ${child.resume ? 'resume' : 'run'} ended on its own with exit ${String(outcome.status)}, the run ${stored ? stored.status : 'not stored'}`, around: outcome.stderr.trim().split('\n').slice(-8) });
            }
            break;
          }
          child.kill();
          await child.done;
          figures.kills++;
          if (random() < 0.5) break;
        }
        for (let resume = 0; resume < MAX_FINAL_RESUMES; resume++) {
          const run = rootRun(dataDir);
          if (run && OVER.has(run.status)) break;
          const ended = await toEnd(start(true));
          last = { ...ended, acceptGaps: true };
          noteCrash(iteration, ended);
          if (ended.hung) figures.hung++;
          else if (run) figures.resumeMs.push(ended.ms);
        }
        const run = rootRun(dataDir);
        if (!run || !OVER.has(run.status)) {
          figures.unfinished++;
          const stderr = (last?.stderr ?? '').trim().split('\n').slice(-6);
          figures.defects.push({ iteration, what: `the run is ${run?.status ?? 'not stored'} after the bounded resumes (last exit ${last ? String(last.status) : 'none: no resume ran'})`, around: [...runsOf(dataDir), ...stderr] });
        }
        if (last) figures.finalExits.push({ status: last.status ?? -1, proper: endedProperly(last.status, last.acceptGaps, dataDir) });
        const toolGroups = inspect(figures, iteration, dataDir, workspace, scenario.expectedEffects);
        for (const group of toolGroups) groups.add(group);
        const orphans = await orphansOf(groups, [dataDir, workspace, scratch]);
        figures.orphans += orphans.length;
        if (orphans.length > 0) figures.defects.push({ iteration, what: `${orphans.length} process(es) left running after the run ended`, around: orphans });
        if (run) {
          const verify = await toEnd(spawnArchon(['audit', 'verify', '--data-dir', dataDir]));
          figures.verifyExits.push(verify.status ?? -1);
        }
      } finally {
        for (const dir of [dataDir, workspace, scratch]) rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    await server.close();
  }
  figures.seconds = (performance.now() - started) / 1000;
  return figures;
}

function printFigures(scenario: CrashScenario, seed: number, figures: Figures): void {
  process.stdout.write(`\n  scenario "${scenario.name}" (seed ${seed}, ${iterationsOf(scenario)} iterations, kill at ${scenario.killWindowMs[0]}–${scenario.killWindowMs[1]} ms after ${scenario.killFrom === 'spawn' ? 'the process starts' : 'its first event'}): ${scenario.summary}\n`);
  const flag = (bad: boolean, text: string) => (bad ? text : undefined);
  const unexplained = figures.repeats.filter((repeat) => !repeat.asked);
  const repeatNames = figures.repeats.map((repeat) => `${repeat.effect}×${repeat.times}${repeat.asked ? ' (asked)' : ''}`).join(', ');
  const row = (name: string, value: string, target?: string, mark?: string) => line(name, value, target, mark);
  row('iterations', String(figures.iterations));
  row('kills (kill -9 of archon run/resume)', String(figures.kills));
  row('runs that ended before their kill moment', String(figures.unkilled));
  row('resumes (killed or run to the end)', String(figures.resumes));
  row('completed runs', `${figures.completedRuns}/${figures.iterations}`, 'all but those ended with stated gaps', flag(figures.completedRuns + figures.gapRuns < figures.iterations, 'FLAG: not every run completed or ended with stated gaps'));
  row('runs killed before stored, started again', String(figures.restarts));
  row('effects made (distinct ledger lines)', `${figures.effects}/${figures.iterations * scenario.expectedEffects.length}`);
  row('effects never made (outcome unknown, not repeated)', String(figures.missingEffects));
  row(
    'effects repeated',
    String(figures.repeats.length),
    '0, or asked as uncertain_repeat',
    flag(figures.repeats.length > 0, `${unexplained.length > 0 ? 'DEFECT: REPEATED WITHOUT AN uncertain_repeat' : 'REPEAT, each after an approved uncertain_repeat'}: ${repeatNames}`),
  );
  row('uncertain_repeat asked / answered yes', `${figures.uncertainRepeats} / ${figures.uncertainRepeatsApproved}`);
  row('runs ended with stated gaps (calls not repeated)', String(figures.gapRuns), undefined, flag(figures.otherGaps.length > 0, `FLAG: OTHER GAPS ${figures.otherGaps.slice(0, DEFECTS_SHOWN).join('; ')}`));
  row('silent successes (exit 0, a call of unknown outcome)', String(figures.silentSuccesses), '0', flag(figures.silentSuccesses > 0, 'DEFECT: SILENT SUCCESS'));
  row('completed steps redone', String(figures.redoneSteps.length), '0', flag(figures.redoneSteps.length > 0, `DEFECT: REDONE ${figures.redoneSteps.join(', ')}`));
  row('child runs (sub-agents)', String(figures.childRuns));
  row('duplicate child runs', String(figures.duplicateChildren), '0', flag(figures.duplicateChildren > 0, 'DEFECT: DUPLICATE CHILD RUN'));
  row('orphans (processes left running)', String(figures.orphans), '0', flag(figures.orphans > 0, 'DEFECT: ORPHAN PROCESSES'));
  row('orphan tool groups killed by a resume', String(figures.orphanGroupsKilled));
  row('resume to the end, p50 / p95', figures.resumeMs.length ? `${Math.round(percentile(figures.resumeMs, 50))} / ${Math.round(percentile(figures.resumeMs, 95))} ms` : 'n/a');
  row('events of archon.db missing from audit.db', String(figures.missingFromAudit), '0', flag(figures.missingFromAudit > 0, 'FLAG: AUDIT GAP'));
  const improper = figures.finalExits.filter((exit) => !exit.proper).map((exit) => exit.status);
  row('last processes not a proper end (0, 7, 1 on gaps)', String(improper.length), '0', flag(improper.length > 0, `FLAG: exits ${improper.join(', ')}`));
  row('runs not ended after the bounded resumes', String(figures.unfinished), '0', flag(figures.unfinished > 0, 'FLAG: UNFINISHED'));
  row('processes hung (killed after 90 s)', String(figures.hung), '0', flag(figures.hung > 0, 'FLAG: HUNG'));
  row('audit verify not exit 0', String(figures.verifyExits.filter((code) => code !== 0).length), '0', flag(figures.verifyExits.some((code) => code !== 0), 'FLAG: AUDIT VERIFY FAILED'));
  row('processes that crashed', String(figures.crashes.length), '0', flag(figures.crashes.length > 0, 'FLAG: CRASH'));
  row('time', `${figures.seconds.toFixed(1)} s`);
  for (const defect of figures.defects.slice(0, DEFECTS_SHOWN)) {
    process.stdout.write(`    !! ${scenario.name}, seed ${seed}, iteration ${defect.iteration}: ${defect.what}\n`);
    for (const around of defect.around) process.stdout.write(`       ${around}\n`);
  }
  if (figures.defects.length > DEFECTS_SHOWN) process.stdout.write(`    !! and ${figures.defects.length - DEFECTS_SHOWN} more\n`);
}

/**
 * Issue "Exactly once": kill -9 at random moments, resume to the end, and count what went wrong, for
 * plans with plain steps, a re-plan, a sub-agent and a non-idempotent MCP tool.
 * ARCHON_BENCH_CRASH_SEED replays a loop; ARCHON_BENCH_CRASH_SCENARIOS (names, comma-separated) picks scenarios.
 */
export async function crashLoopBenchmarks(): Promise<void> {
  process.stdout.write('\nCrash loop (kill -9 of archon run/resume at seeded random moments, then resume --approve auto --accept-gaps to the end)\n');
  const picked = process.env.ARCHON_BENCH_CRASH_SCENARIOS?.split(',').map((name) => name.trim());
  const started = performance.now();
  for (const [index, scenario] of CRASH_SCENARIOS.entries()) {
    if (picked && !picked.includes(scenario.name)) continue;
    const seed = BASE_SEED + index;
    printFigures(scenario, seed, await crashLoopScenario(scenario, seed));
  }
  line('crash loop, all scenarios', `${((performance.now() - started) / 1000).toFixed(1)} s`, 'about 3 min on 2 cores');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await crashLoopBenchmarks();
