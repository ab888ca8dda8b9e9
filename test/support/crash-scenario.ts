import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { planReply, type RecordedRequest, type ScriptedReply } from '../kit/scripted-model-server';

/**
 * A run whose steps leave marks on disk: each step appends two lines to ledger.txt with
 * run_command and writes a note with write_file, then answers. The model's next move follows from
 * the conversation it is sent (how many replies it already gave), as a real model's would, so a
 * resumed step gets the answer it would have had.
 */
export const CRASH_STEPS = ['alpha', 'beta', 'gamma', 'delta'];

function assistantTurns(request: RecordedRequest): number {
  return (request.body.messages ?? []).filter((message) => message.role === 'assistant').length;
}

function stepOf(request: RecordedRequest): string {
  const text = (request.body.messages ?? []).map((message) => (typeof message.content === 'string' ? message.content : '')).join('\n');
  return /^Step ([^:\n]+):/m.exec(text)?.[1] ?? '?';
}

export function crashScenarioReply(request: RecordedRequest): ScriptedReply {
  if (request.purpose === 'plan') {
    return planReply([
      { id: 'alpha', description: 'mark alpha' },
      { id: 'beta', description: 'mark beta' },
      { id: 'gamma', description: 'mark gamma', dependencies: ['alpha'] },
      { id: 'delta', description: 'mark delta', dependencies: ['beta', 'gamma'] },
    ]);
  }
  if (request.purpose === 'final') return { content: 'all marks made' };
  const step = stepOf(request);
  switch (assistantTurns(request)) {
    case 0:
      return { toolCalls: [{ name: 'run_command', arguments: { command: `sleep 0.05; echo MARK-${step}-1 >> ledger.txt` } }] };
    case 1:
      return { toolCalls: [{ name: 'write_file', arguments: { path: `notes/${step}.txt`, content: `${step} done` } }, { name: 'run_command', arguments: { command: `echo MARK-${step}-2 >> ledger.txt` } }] };
    default:
      return { content: `${step} marked` };
  }
}

export interface CrashFindings {
  /** Marks that are in the ledger more than once. */
  repeatedMarks: string[];
  /** Steps announced completed more than once. */
  redoneSteps: string[];
  /** Repeats a person was asked about (uncertain_repeat), which excuse a repeated mark. */
  uncertainRepeats: number;
  /** Events of archon.db that are not in the auditor's log. */
  missingFromAudit: number;
}

/** What the ledger and archon.db say about a finished scenario. */
export function crashFindings(workspace: string, dataDir: string): CrashFindings {
  let ledger = '';
  try {
    ledger = readFileSync(join(workspace, 'ledger.txt'), 'utf8');
  } catch {
    // No mark was made.
  }
  const counts = new Map<string, number>();
  for (const line of ledger.split('\n').filter(Boolean)) counts.set(line, (counts.get(line) ?? 0) + 1);
  const db = new Database(join(dataDir, 'archon.db'), { readonly: true });
  try {
    const completed = db.prepare("SELECT json_extract(body_json, '$.stepId') AS step, count(*) AS n FROM events WHERE type = 'step.completed' GROUP BY step").all() as { step: string; n: number }[];
    const asked = db.prepare("SELECT count(*) AS n FROM approvals WHERE kind = 'uncertain_repeat' AND status IN ('approved', 'edited')").get() as { n: number };
    db.prepare('ATTACH DATABASE ? AS audit').run(join(dataDir, 'audit.db'));
    const missing = db.prepare('SELECT count(*) AS n FROM events e WHERE NOT EXISTS (SELECT 1 FROM audit.records r WHERE r.run_id = e.run_id AND r.event_seq = e.seq)').get() as { n: number };
    return {
      missingFromAudit: missing.n,
      repeatedMarks: [...counts].filter(([, count]) => count > 1).map(([mark]) => mark),
      redoneSteps: completed.filter((row) => row.n > 1).map((row) => row.step),
      uncertainRepeats: asked.n,
    };
  } finally {
    db.close();
  }
}

/** The one run of a data dir, if it was created before a kill. */
export function onlyRunId(dataDir: string): string | null {
  let db: Database.Database;
  try {
    // Read-write: a killed writer may leave a WAL that only a writer can recover.
    db = new Database(join(dataDir, 'archon.db'), { fileMustExist: true });
  } catch {
    return null;
  }
  try {
    const row = db.prepare('SELECT id FROM runs ORDER BY created_at LIMIT 1').get() as { id: string } | undefined;
    return row?.id ?? null;
  } catch (error) {
    // Killed after the file was created and before its schema was committed: there is no run yet.
    if (/no such table/.test(String(error))) return null;
    throw error;
  } finally {
    db.close();
  }
}

/** Seeded random numbers, so a failing loop can be replayed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

export interface CrashLoopOptions {
  modelUrl: string;
  /** A fresh data dir and workspace for each scenario. */
  newDir(): string;
  kills: number;
  random: () => number;
  /** Runs `archon` with these arguments; `kill` ends it with SIGKILL. */
  spawn(args: string[]): { kill(): void; done: Promise<{ status: number | null; stdout: string; stderr: string }> };
}

export interface CrashLoopReport {
  kills: number;
  scenarios: number;
  repeatedMarks: string[];
  redoneSteps: string[];
  uncertainRepeats: number;
  missingFromAudit: number;
  /** Exit codes of the final resume of each scenario (0 completed, 7 completed with the gaps it accepted: calls a kill cut short and --approve auto did not repeat), and of `archon audit verify` after it. */
  finalExits: number[];
  verifyExits: number[];
  /** Anything a process printed that says it crashed. */
  crashes: string[];
}

const delay = (ms: number) => new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), ms));

/**
 * Kills `archon run` / `archon resume` at random moments (SIGKILL), then resumes each run to its end
 * with --approve auto, until `kills` kills were made; reports what the ledger and the databases say.
 */
export async function crashLoop(options: CrashLoopOptions): Promise<CrashLoopReport> {
  const report: CrashLoopReport = { kills: 0, scenarios: 0, repeatedMarks: [], redoneSteps: [], uncertainRepeats: 0, missingFromAudit: 0, finalExits: [], verifyExits: [], crashes: [] };
  const noteCrash = (result: { stderr: string }) => {
    if (/Unhandled|TypeError|ReferenceError|SqliteError|UNIQUE constraint|at .*\.js:\d+/.test(result.stderr)) report.crashes.push(result.stderr.slice(0, 2000));
  };
  for (let scenario = 0; report.kills < options.kills && scenario < options.kills * 2; scenario++) {
    report.scenarios++;
    const dataDir = options.newDir();
    const workspace = options.newDir();
    const common = ['--model-url', options.modelUrl, '--data-dir', dataDir, '--workspace', workspace, '--policy', 'permissive', '--approve', 'auto', '--concurrency', '2'];
    for (let attempt = 0; attempt < 4 && report.kills < options.kills; attempt++) {
      const runId = onlyRunId(dataDir);
      const process = options.spawn(runId ? ['resume', runId, ...common] : ['run', 'mark the ledger', ...common]);
      const outcome = await Promise.race([process.done, delay(100 + options.random() * 1900)]);
      if (outcome !== 'timeout') {
        noteCrash(outcome);
        break;
      }
      process.kill();
      await process.done;
      report.kills++;
      if (options.random() < 0.5) break;
    }
    const runId = onlyRunId(dataDir);
    if (runId) {
      const final = await options.spawn(['resume', runId, ...common, '--accept-gaps']).done;
      noteCrash(final);
      // A run that had already ended has nothing to resume (exit 2 saying so).
      const ended = /already ended \((completed|completed_with_gaps)\)/.exec(final.stderr);
      report.finalExits.push(final.status === 2 && ended ? (ended[1] === 'completed' ? 0 : 7) : (final.status ?? -1));
    }
    if (!runId) continue;
    const verify = await options.spawn(['audit', 'verify', '--data-dir', dataDir]).done;
    report.verifyExits.push(verify.status ?? -1);
    const findings = crashFindings(workspace, dataDir);
    report.repeatedMarks.push(...findings.repeatedMarks);
    report.redoneSteps.push(...findings.redoneSteps);
    report.uncertainRepeats += findings.uncertainRepeats;
    report.missingFromAudit += findings.missingFromAudit;
  }
  return report;
}
