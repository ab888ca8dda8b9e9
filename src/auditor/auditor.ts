import { existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { ArchonError } from '../shared/errors';
import type { AuditReport, VerifyResult } from '../shared/schemas/audit';
import { createAuditKey, DATA_DIR_ID_FILE, defaultAuditKeyDir, findAuditSecrets } from './audit-key';
import { AUDIT_DB_FILE, AuditLog, readStoredHead, type AuditEntry, type SignedHead } from './audit-log';
import { buildReport } from './audit-report';
import { ArchonEvents } from './archon-events';

const PAGE = 500;
/** Pages one `follow` reads per run before it lets messages in; the next poll goes on. */
const MAX_PAGES = 200;
/** Records one transaction holds at most: few commits and head signatures per record, bounded memory. */
export const BATCH = 5_000;

function noChain(log: AuditLog, events: ArchonEvents): string | null {
  if (log.recordCount() > 0 || log.hasHead()) return null;
  const total = [...events.lastSeqs().values()].reduce((sum, seq) => sum + seq, 0);
  return total > 0 ? `archon.db holds ${total} events but this data dir has no audit chain: audit.db, its key or the data dir's id (${DATA_DIR_ID_FILE}) was removed` : null;
}

/**
 * The independent auditor: follows archon.db's events (read-only, in seq order per run) into its own
 * log. It goes on from the last seq it recorded for each run, so a crash of anything loses nothing:
 * the next start catches up. When the log cannot be vouched for, it records nothing (`problem`).
 */
export class Auditor {
  private readonly cursors: Map<string, number>;
  private estopCursor: number;
  private readonly recent = new Set<string>();
  /** Runs whose deletion by Archon is recorded. */
  private readonly deleted: Set<string>;

  private constructor(
    private readonly log: AuditLog,
    private readonly events: ArchonEvents,
    readonly problem: string | null,
  ) {
    this.cursors = log.cursors();
    this.estopCursor = log.cursorOf(null);
    this.deleted = log.deletedRuns();
  }

  /** The auditor that writes: makes the key of a data dir that has no chain yet, refuses one whose chain is broken. */
  static start(dataDir: string, keyDir = defaultAuditKeyDir()): Auditor {
    const inspected = Auditor.inspect(dataDir, keyDir);
    const problem = inspected.log.headProblem()?.problem ?? inspected.problem;
    if (problem) return new Auditor(inspected.log, inspected.events, problem);
    inspected.log.close();
    const found = findAuditSecrets(dataDir, keyDir);
    const log = AuditLog.open(dataDir, found.key ? found : createAuditKey(found));
    if (!log.anchored()) log.signHead();
    return new Auditor(log, inspected.events, null);
  }

  /** Reads only: for `archon audit verify` and `report`; creates nothing. */
  static inspect(dataDir: string, keyDir = defaultAuditKeyDir()): Auditor {
    const events = new ArchonEvents(dataDir);
    let log: AuditLog;
    try {
      log = AuditLog.open(dataDir, findAuditSecrets(dataDir, keyDir), { readonly: true });
    } catch (error) {
      events.close();
      throw error;
    }
    return new Auditor(log, events, noChain(log, events));
  }

  /**
   * Records what archon.db holds past each run's cursor, and any new emergency stop; returns how many
   * records were added. What it reads goes in batches of up to BATCH records, one transaction and one
   * signed head each; a cursor moves only once its batch is committed, so a crash re-reads, never skips.
   */
  follow(runIds: Iterable<string>): number {
    if (this.problem) return 0;
    const batch: AuditEntry[] = [];
    /** The last seq read per run (null: the emergency stops), not yet committed. */
    const read = new Map<string | null, number>();
    let added = 0;
    const commit = () => {
      if (batch.length > 0) added += this.log.append(batch.splice(0));
      for (const [runId, seq] of read) {
        if (runId === null) this.estopCursor = seq;
        else {
          this.cursors.set(runId, seq);
          this.recent.add(runId);
        }
      }
      read.clear();
    };
    const take = (runId: string | null, after: (seq: number) => AuditEntry[]) => {
      for (let page = 0; page < MAX_PAGES; page++) {
        const entries = after(read.get(runId) ?? (runId === null ? this.estopCursor : (this.cursors.get(runId) ?? 0)));
        const last = entries.at(-1);
        if (!last?.eventSeq) break;
        batch.push(...entries);
        read.set(runId, last.eventSeq);
        if (batch.length >= BATCH) commit();
        if (entries.length < PAGE) break;
      }
    };
    take(null, (seq) => this.events.estopsAfter(seq, PAGE));
    for (const runId of runIds) take(runId, (seq) => this.events.eventsAfter(runId, seq, PAGE));
    const deletions = this.events.deletions().filter((entry) => entry.runId !== null && !this.deleted.has(entry.runId));
    batch.push(...deletions);
    commit();
    for (const entry of deletions) this.deleted.add(entry.runId as string);
    return added;
  }

  /** Every run whose events in archon.db go past what the log holds (on start and when draining). */
  catchUp(): number {
    const behind = [...this.events.lastSeqs()].filter(([runId, seq]) => seq > (this.cursors.get(runId) ?? 0)).map(([runId]) => runId);
    return this.follow(behind);
  }

  /** The short-interval check: only when archon.db changed, only runs that may still be writing. */
  poll(): number {
    if (!this.events.changed()) return 0;
    const candidates = new Set([...this.events.unfinishedRuns(), ...this.recent]);
    this.recent.clear();
    return this.follow(candidates);
  }

  /** The chain and the signed head (tampering), runs gone from archon.db unrecorded (tampering), then how far the log lags behind archon.db (a lag, not tampering: recorded later). */
  verify(): VerifyResult {
    const result = this.log.verify();
    if (!result.intact) return result;
    const problem = this.problem ?? this.vanished();
    if (problem) return { intact: false, records: result.records, problem, seq: null };
    const behind = this.behind();
    return behind ? { ...result, behind } : result;
  }

  /** Events the log recorded that archon.db no longer holds, of runs Archon did not delete: removed behind its back. */
  private vanished(): string | null {
    if (!this.events.present()) return null;
    const held = this.events.lastSeqs();
    const deleted = new Set([...this.log.deletedRuns(), ...this.events.deletions().map((entry) => entry.runId)]);
    const gone = [...this.log.cursors()]
      .filter(([runId, seq]) => !deleted.has(runId) && (held.get(runId) ?? 0) < seq)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([runId, seq]) => `run ${runId} ${held.has(runId) ? `from event ${(held.get(runId) ?? 0) + 1} to ${seq}` : `(all ${seq} events)`}`);
    if (gone.length === 0) return null;
    const named = gone.length > 3 ? [...gone.slice(0, 3), `${gone.length - 3} more runs`] : gone;
    return `archon.db no longer holds events the log recorded, and Archon recorded no deletion of them: ${named.join(', ')}. They were removed from archon.db outside Archon; the log still holds them (\`archon audit report <run>\`)`;
  }

  /** Events (and emergency stops) archon.db holds past what the log has recorded. */
  private behind(): { events: number; detail: string } | null {
    const logged = this.log.cursors();
    const runs = [...this.events.lastSeqs()]
      .filter(([runId, seq]) => seq > (logged.get(runId) ?? 0))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([runId, seq]) => ({ runId, from: (logged.get(runId) ?? 0) + 1, count: seq - (logged.get(runId) ?? 0) }));
    const estops = Math.max(0, this.events.lastEstop() - this.log.cursorOf(null));
    const events = runs.reduce((sum, run) => sum + run.count, estops);
    if (events === 0) return null;
    const parts = runs.slice(0, 3).map((run) => `run ${run.runId} from event ${run.from}`);
    if (runs.length > 3) parts.push(`${runs.length - 3} more runs`);
    if (estops > 0) parts.push(`emergency stops from ${this.log.cursorOf(null) + 1}`);
    return { events, detail: parts.join(', ') };
  }

  /** Writes down that this auditor replaced one that died (its exit code or signal); what it missed was caught up on at its start. */
  recordRestart(exit: { code: number | null; signal: string | null; restarts: number }, now = new Date()): void {
    if (this.problem) return;
    const ts = now.toISOString();
    const body = { type: 'auditor.restarted', ts, exitCode: exit.code, signal: exit.signal, recentRestarts: exit.restarts };
    this.log.append([{ runId: null, eventSeq: null, type: body.type, ts, body }]);
  }

  report(scope: { runId: string } | { day: string }): AuditReport {
    return buildReport(this.log, scope);
  }

  /** The audited runs whose id starts with `prefix` (the app shows the first 8 characters). */
  runIdsStartingWith(prefix: string): string[] {
    return [...this.log.cursors().keys()].filter((runId) => runId.startsWith(prefix)).sort();
  }

  close(): void {
    this.log.close();
    this.events.close();
  }
}

/**
 * `archon audit reset --acknowledge`: sets the old audit.db aside (kept, never deleted), starts a new
 * chain whose first record names the reset, the reason, what was wrong and the old head, and catches
 * up on archon.db's events.
 */
export function resetAudit(dataDir: string, reason: string, keyDir = defaultAuditKeyDir(), now = new Date()): { setAside: string | null; problem: string | null } {
  if (!reason.trim()) throw new ArchonError('VALIDATION_FAILED', 'Say why: `archon audit reset --acknowledge "<reason>"`.');
  const problem = verdictBefore(dataDir, keyDir);
  const secrets = findAuditSecrets(dataDir, keyDir);
  const [oldHead, oldAnchor] = [readStoredHead(secrets.headFile), readStoredHead(secrets.anchorFile)];
  const file = join(dataDir, AUDIT_DB_FILE);
  const setAside = existsSync(file) ? `${AUDIT_DB_FILE}.before-reset-${now.toISOString().replace(/[:.]/g, '-')}` : null;
  if (setAside) {
    for (const suffix of ['', '-wal', '-shm']) if (existsSync(file + suffix)) renameSync(file + suffix, join(dataDir, setAside + suffix));
  }
  const log = AuditLog.open(dataDir, secrets.key ? secrets : createAuditKey(secrets));
  try {
    log.restartAnchor();
    const quoted = (head: SignedHead | null) => (head ? { seq: head.seq, hash: head.hash } : null);
    const body = { type: 'audit.reset', ts: now.toISOString(), reason, problem, oldHead: quoted(oldHead), oldAnchor: quoted(oldAnchor), setAside, keyRecreated: secrets.key === null };
    log.append([{ runId: null, eventSeq: null, type: 'audit.reset', ts: body.ts, body }]);
  } finally {
    log.close();
  }
  const auditor = Auditor.start(dataDir, keyDir);
  try {
    auditor.catchUp();
  } finally {
    auditor.close();
  }
  return { setAside, problem };
}

/** What was wrong before a reset, for its record; a log that cannot even be opened says so. */
function verdictBefore(dataDir: string, keyDir: string): string | null {
  try {
    const before = Auditor.inspect(dataDir, keyDir);
    try {
      const result = before.verify();
      return result.intact ? null : result.problem;
    } finally {
      before.close();
    }
  } catch (error) {
    return (error as Error).message;
  }
}
