import { z } from 'zod';
import { ArchonError } from '../../shared/errors';
import { parseJsonOrUndefined } from '../../shared/json';
import type { ApprovalKind, ApprovalRequest, ApprovalStatus, Decider } from '../../shared/schemas/approval';
import { RunEventSchema, type RunEvent } from '../../shared/schemas/events';
import { PlanStepSchema, type PlanStep } from '../../shared/schemas/plan';
import { ENDED_RUN_STATUSES, RunControlSchema, RunOptionsSchema, RunSummarySchema, StepStatusSchema, WorkspacePinSchema, type WorkspacePin, type RunControl, type RunKind, type RunOptions, type RunStatus, type RunSummary, type StepStatus, type Policy } from '../../shared/schemas/run';
import { InboxItemSchema, type InboxItem } from '../../shared/schemas/run-order';
import { ToolResultSchema, type SideEffects, type ToolResult } from '../../shared/schemas/tool';
import type { ChatMessage } from '../model/chat';
import { ProbeCache } from '../model/probe-cache';
import type { SecretRedactor } from '../secrets/redactor';
import { BusMessageStore } from './bus-messages';
import { FileEffectStore } from './file-effects';
import { RunRows } from './run-rows';
import { writeTransaction, type SqliteDatabase } from './open-database';
import type { DurableWrites } from './wal-sync';

const RunRowSchema = z
  .object({
    id: z.string(),
    goal: z.string(),
    status: z.string(),
    policy: z.string(),
    answer: z.string().nullable(),
    error: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    tokens: z.number(),
    cost_usd: z.number(),
    /** The JSON type of the price the run started with: 'null' when nobody knew it, null for runs from before prices were kept. */
    price_type: z.string().nullable(),
    parent_run_id: z.string().nullable(),
    follow_up_of: z.string().nullable(),
    kind: z.string(),
  })
  .transform((row) =>
    RunSummarySchema.parse({
      id: row.id,
      goal: row.goal,
      status: row.status,
      policy: row.policy,
      answer: row.answer,
      error: row.error,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      tokens: row.tokens,
      costUsd: row.cost_usd,
      ...(row.price_type === null ? {} : { priceKnown: row.price_type !== 'null' }),
      ...(row.parent_run_id === null ? {} : { parentRunId: row.parent_run_id }),
      ...(row.follow_up_of === null ? {} : { followUpOf: row.follow_up_of }),
      kind: row.kind,
    }),
  );

const StepRowSchema = z.object({
  spec_json: z.string().transform((text) => PlanStepSchema.parse(JSON.parse(text))),
  status: StepStatusSchema,
  result: z.string().nullable(),
  error: z.string().nullable(),
  attempt: z.int().positive(),
  revision: z.int().nonnegative(),
  replaced_in: z.int().positive().nullable(),
  waived: z.int().transform((value) => value === 1),
});

export interface StoredStep {
  spec: PlanStep;
  status: StepStatus;
  result: string | null;
  error: string | null;
  /** Starts at 1; a failed step run again on resume starts a new attempt with a new conversation. */
  attempt: number;
  /** The plan revision that added the step (0: the first plan). */
  revision: number;
  /** The revision that replaced it, when a scoped re-plan did: it is no longer part of the plan. */
  replacedIn: number | null;
  /** Skipped by the operator at an escalation: the steps after it run without its result. */
  waived: boolean;
}

export interface RecordedToolCall {
  status: string;
  args: unknown;
  result: ToolResult | null;
  idempotent: boolean;
  /** The MCP tool definition the call was made to (null for built-in tools). */
  definitionHash: string | null;
  /** Where the call ran when not on this machine (see ToolDefinition.executor). */
  executor: string | null;
}

/** A finished or interrupted tool call of a run or of a sub-agent run below it: the evidence a claim is checked against. */
export interface RunToolCall {
  runId: string;
  stepId: string;
  tool: string;
  args: unknown;
  sideEffects: string;
  result: ToolResult | null;
}

/** One request a model server received, as `model_calls` keeps it. */
export interface ModelCallRow {
  id: string;
  runId: string;
  stepId: string | null;
  purpose: string;
  attempt: number;
  ok: boolean;
  promptTokens: number;
  completionTokens: number;
  estimated: boolean;
  error: string | null;
  startedAt: string;
  endedAt: string;
  /** Who let the call through (see AllowedBy): the policy, or an approval row. */
  allowedBy?: string | null;
}

/** One answer the operator gave: to which kind of checkpoint, about which tool (tool calls), and how. */
export interface RecordedDecision {
  kind: ApprovalKind;
  tool: string | null;
  status: ApprovalStatus;
}

/** Refused: `runId` (this run, or another of its sub-agent tree) is held by the live process `pid`. */
export type LeaseOutcome = { ok: true } | { ok: false; pid: number; runId: string };

export interface ToolProcessRecord {
  callId: string;
  pgid: number;
  startTicks: string | null;
}

const RUN_COLUMNS =
  'id, goal, status, policy, answer, error, created_at, updated_at, ' +
  '(SELECT COALESCE(SUM(tokens), 0) FROM budget_ledger WHERE run_id = runs.id) AS tokens, ' +
  '(SELECT COALESCE(SUM(cost_usd), 0) FROM budget_ledger WHERE run_id = runs.id) AS cost_usd, ' +
  "json_type(options_json, '$.price') AS price_type, " +
  "json_extract(options_json, '$.parentRunId') AS parent_run_id, follow_up_of, runs.kind AS kind";

/** A run's validator confidences, read through their own index (events_validation), not the run's whole event log. */
const VALIDATIONS =
  "SELECT json_extract(body_json, '$.confidence') AS confidence FROM events INDEXED BY events_validation WHERE run_id = ? AND type = 'validation.completed' AND json_extract(body_json, '$.confidence') IS NOT NULL";

/** A run and its sub-agents' runs, at every depth: a parent's budget covers them all. */
const RUN_TREE = "WITH RECURSIVE tree(id) AS (SELECT ? UNION SELECT runs.id FROM runs JOIN tree ON json_extract(runs.options_json, '$.parentRunId') = tree.id)";

/**
 * Runs, their steps, model calls and tool calls. Each state change is one small write (a row
 * inserted or one row updated), so its cost stays flat however long a run grows.
 */
export class RunStore {
  /** What each write of a run replaced (for undo). */
  readonly fileEffects: FileEffectStore;
  /** The agent bus's envelopes. */
  readonly busMessages: BusMessageStore;
  /** Each model server's last probe, for the runs that follow it. */
  readonly probes: ProbeCache;
  /** A run's state as rows, carried to another data dir where it goes on (a cluster's workers). */
  readonly rows: RunRows;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly durable: DurableWrites,
    private readonly secrets: SecretRedactor,
  ) {
    this.fileEffects = new FileEffectStore(db, durable.now, secrets);
    this.busMessages = new BusMessageStore(db, secrets);
    this.probes = new ProbeCache(db);
    this.rows = new RunRows(db, durable.now);
  }

  private clean<T>(value: T): T {
    return this.secrets.redactValue(value);
  }

  createRun(run: { id: string; goal: string; policy: Policy; options: RunOptions; now: string; kind?: RunKind }): void {
    this.db
      .prepare("INSERT INTO runs (id, goal, status, policy, options_json, follow_up_of, created_at, updated_at, kind) VALUES (?, ?, 'pending', ?, ?, ?, ?, ?, ?)")
      .run(run.id, this.clean(run.goal), run.policy, JSON.stringify(run.options), run.options.followUpOf ?? null, run.now, run.now, run.kind ?? 'goal');
  }

  /** A run's full id from its full id or a prefix of 8 or more characters that names one run only. */
  resolveRunId(reference: string): string {
    const exact = this.db.prepare('SELECT id FROM runs WHERE id = ?').get(reference) as { id: string } | undefined;
    if (exact) return exact.id;
    const matches = reference.length >= 8 ? (this.db.prepare("SELECT id FROM runs WHERE substr(id, 1, ?) = ? LIMIT 2").all(reference.length, reference) as { id: string }[]) : [];
    if (matches.length === 1 && matches[0]) return matches[0].id;
    if (matches.length > 1) throw new ArchonError('VALIDATION_FAILED', `More than one run starts with ${reference}; give more of its id (\`archon runs\` lists them).`);
    throw new ArchonError('NOT_FOUND', `There is no run ${reference}. See \`archon runs\` for the ids.`);
  }

  setRunStatus(id: string, status: RunStatus, now: string, outcome: { answer?: string; error?: string } = {}): void {
    this.db
      .prepare('UPDATE runs SET status = ?, answer = COALESCE(?, answer), error = ?, updated_at = ? WHERE id = ?')
      .run(status, this.clean(outcome.answer ?? null), this.clean(outcome.error ?? null), now, id);
  }

  getRun(id: string): { summary: RunSummary; options: RunOptions } | null {
    const row = this.db.prepare(`SELECT ${RUN_COLUMNS}, options_json FROM runs WHERE id = ?`).get(id) as ({ options_json: string } & object) | undefined;
    if (!row) return null;
    return { summary: RunRowSchema.parse(row), options: RunOptionsSchema.parse(JSON.parse(row.options_json)) };
  }

  /** The run's workspace as it was pinned when it started; null for a run from before pins. */
  workspacePin(id: string): WorkspacePin | null {
    const row = this.db.prepare('SELECT workspace_real AS realPath, workspace_dev AS dev, workspace_ino AS ino FROM runs WHERE id = ? AND workspace_real IS NOT NULL').get(id);
    return row ? WorkspacePinSchema.parse(row) : null;
  }

  pinWorkspace(id: string, pin: WorkspacePin): void {
    this.db.prepare('UPDATE runs SET workspace_real = ?, workspace_dev = ?, workspace_ino = ? WHERE id = ?').run(pin.realPath, pin.dev, pin.ino, id);
  }

  listRuns(limit: number): RunSummary[] {
    const rows = this.db.prepare(`SELECT ${RUN_COLUMNS} FROM runs ORDER BY created_at DESC, rowid DESC LIMIT ?`).all(limit);
    return rows.map((row) => RunRowSchema.parse(row));
  }

  /** The inbox: runs a worker drove (a schedule's, or sent with `--detach`) that ended, or that wait for a person's answer, the latest change first. */
  inbox(limit: number): InboxItem[] {
    const ended = [...ENDED_RUN_STATUSES].map(() => '?').join(', ');
    const waiting = "EXISTS (SELECT 1 FROM approvals WHERE approvals.run_id = runs.id AND approvals.status = 'pending')";
    const rows = this.db
      .prepare(
        `SELECT ${RUN_COLUMNS}, json_extract(options_json, '$.dispatch.scheduleId') AS schedule_id, json_extract(options_json, '$.dispatch.firedAt') AS fired_at, ${waiting} AS waiting FROM runs ` +
          `WHERE json_type(options_json, '$.dispatch') = 'object' AND json_extract(options_json, '$.parentRunId') IS NULL AND (status IN (${ended}) OR ${waiting}) ORDER BY updated_at DESC, rowid DESC LIMIT ?`,
      )
      .all(...ENDED_RUN_STATUSES, limit) as ({ schedule_id: string | null; fired_at: string | null; waiting: number } & object)[];
    return rows.map((row) => InboxItemSchema.parse({ run: RunRowSchema.parse(row), scheduleId: row.schedule_id, firedAt: row.fired_at, waiting: row.waiting === 1 }));
  }

  /**
   * Deletes a run and everything recorded for it, with its sub-agents' runs all the way down (ON DELETE
   * CASCADE); its audit records stay in the auditor's log, and a tombstone per run tells the auditor Archon deleted it.
   */
  deleteRun(id: string, now: string): boolean {
    return writeTransaction(this.db, () => {
      this.db.prepare(`${RUN_TREE} INSERT INTO run_deletions (run_id, last_seq, ts) SELECT tree.id, COALESCE((SELECT MAX(seq) FROM events WHERE run_id = tree.id), 0), ? FROM tree JOIN runs ON runs.id = tree.id`).run(id, now);
      return this.db.prepare(`${RUN_TREE} DELETE FROM runs WHERE id IN (SELECT id FROM tree)`).run(id).changes > 0;
    });
  }

  /** A run's events after `afterSeq`, oldest first. */
  events(runId: string, limit = 5000, afterSeq = 0): RunEvent[] {
    const rows = this.db.prepare('SELECT body_json FROM events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?').all(runId, afterSeq, limit) as { body_json: string }[];
    return rows.flatMap((row) => {
      const parsed = RunEventSchema.safeParse(parseJsonOrUndefined(row.body_json));
      return parsed.success ? [parsed.data] : [];
    });
  }

  /** The validators' confidences in a run (about one step, or all of them when `stepId` is null), oldest first. */
  confidences(runId: string, stepId: string | null): number[] {
    const rows = stepId === null ? this.db.prepare(`${VALIDATIONS} ORDER BY seq`).all(runId) : this.db.prepare(`${VALIDATIONS} AND json_extract(body_json, '$.stepId') = ? ORDER BY seq`).all(runId, stepId);
    return (rows as { confidence: number }[]).map((row) => row.confidence);
  }

  /** The writes `write` makes, in one transaction: they land together, for the cost of one commit. */
  together<T>(write: () => T): T {
    return writeTransaction(this.db, write);
  }

  savePlan(runId: string, steps: readonly PlanStep[]): void {
    const insert = this.db.prepare("INSERT INTO steps (run_id, id, position, spec_json, status) VALUES (?, ?, ?, ?, 'pending')");
    writeTransaction(this.db, () => {
      this.db.prepare('DELETE FROM steps WHERE run_id = ?').run(runId);
      steps.forEach((step, position) => insert.run(runId, step.id, position, JSON.stringify(this.clean(step))));
    });
  }

  getSteps(runId: string): StoredStep[] {
    const rows = this.db.prepare('SELECT spec_json, status, result, error, attempt, revision, replaced_in, waived FROM steps WHERE run_id = ? ORDER BY position').all(runId);
    return rows.map((row) => {
      const parsed = StepRowSchema.parse(row);
      return { spec: parsed.spec_json, status: parsed.status, result: parsed.result, error: parsed.error, attempt: parsed.attempt, revision: parsed.revision, replacedIn: parsed.replaced_in, waived: parsed.waived };
    });
  }

  /**
   * A scoped re-plan, in one transaction: the replaced steps stay, marked with the revision that
   * replaced them (those that had not started as skipped), and the new steps join the plan after every step there is.
   */
  revisePlan(runId: string, revision: number, replaced: readonly string[], added: readonly PlanStep[], skipReason: string): void {
    this.durable.now(() => {
      const mark = this.db.prepare("UPDATE steps SET replaced_in = ?, status = CASE status WHEN 'pending' THEN 'skipped' ELSE status END, error = CASE status WHEN 'pending' THEN ? ELSE error END WHERE run_id = ? AND id = ?");
      for (const id of replaced) mark.run(revision, skipReason, runId, id);
      const { next } = this.db.prepare('SELECT COALESCE(MAX(position), -1) + 1 AS next FROM steps WHERE run_id = ?').get(runId) as { next: number };
      const insert = this.db.prepare("INSERT INTO steps (run_id, id, position, spec_json, status, revision) VALUES (?, ?, ?, ?, 'pending', ?)");
      added.forEach((step, index) => insert.run(runId, step.id, next + index, JSON.stringify(this.clean(step)), revision));
    });
  }

  /** The operator edited a step (at an escalation): it runs again with the new spec, as a new attempt. */
  replaceStepSpec(runId: string, step: PlanStep): void {
    this.db.prepare('UPDATE steps SET spec_json = ? WHERE run_id = ? AND id = ?').run(JSON.stringify(this.clean(step)), runId, step.id);
  }

  stepAttempt(runId: string, stepId: string): number {
    const row = this.db.prepare('SELECT attempt FROM steps WHERE run_id = ? AND id = ?').get(runId, stepId) as { attempt: number } | undefined;
    return row?.attempt ?? 1;
  }

  /** A failed or skipped step run again: a new attempt, pending, with a conversation of its own. */
  retryStep(runId: string, stepId: string): void {
    this.db.prepare("UPDATE steps SET status = 'pending', result = NULL, error = NULL, attempt = attempt + 1 WHERE run_id = ? AND id = ?").run(runId, stepId);
  }

  /** Messages of a step's conversation from `position` on, in order and in one write: what resume continues from. */
  appendTurns(key: { runId: string; stepId: string; attempt: number }, position: number, messages: readonly ChatMessage[]): void {
    const insert = this.db.prepare('INSERT INTO step_turns (run_id, step_id, attempt, position, message_json) VALUES (?, ?, ?, ?, ?)');
    writeTransaction(this.db, () => messages.forEach((message, index) => insert.run(key.runId, key.stepId, key.attempt, position + index, JSON.stringify(this.clean(message)))));
  }

  turns(runId: string, stepId: string, attempt: number): ChatMessage[] {
    const rows = this.db.prepare('SELECT message_json FROM step_turns WHERE run_id = ? AND step_id = ? AND attempt = ? ORDER BY position').all(runId, stepId, attempt) as { message_json: string }[];
    return rows.map((row) => JSON.parse(row.message_json) as ChatMessage);
  }

  /** A note now stands for the step's turns before `through`; the turns themselves stay in step_turns. */
  saveCompaction(key: { runId: string; stepId: string; attempt: number }, compaction: { through: number; note: string }): void {
    this.db
      .prepare('INSERT INTO step_compactions (run_id, step_id, attempt, through, note) VALUES (?, ?, ?, ?, ?)')
      .run(key.runId, key.stepId, key.attempt, compaction.through, this.clean(compaction.note));
  }

  /** The latest compaction of a step's conversation: what a resumed step sends in place of the turns it covers. */
  compaction(key: { runId: string; stepId: string; attempt: number }): { through: number; note: string } | null {
    const row = this.db
      .prepare('SELECT through, note FROM step_compactions WHERE run_id = ? AND step_id = ? AND attempt = ? ORDER BY through DESC LIMIT 1')
      .get(key.runId, key.stepId, key.attempt) as { through: number; note: string } | undefined;
    return row ?? null;
  }

  /** The run's working memory (docs/model-protocol.md, "Working memory"): one value a key, the latest kept. */
  putFact(runId: string, key: string, value: string, now: string): void {
    this.db
      .prepare('INSERT INTO run_facts (run_id, key, value, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at')
      .run(runId, key, this.clean(value), now);
  }

  /** One fact of a run, read by its key (one row, however many facts the run keeps). */
  fact(runId: string, key: string): string | null {
    const row = this.db.prepare('SELECT value FROM run_facts WHERE run_id = ? AND key = ?').get(runId, key) as { value: string } | undefined;
    return row?.value ?? null;
  }

  facts(runId: string): Map<string, string> {
    const rows = this.db.prepare('SELECT key, value FROM run_facts WHERE run_id = ? ORDER BY key').all(runId) as { key: string; value: string }[];
    return new Map(rows.map((row) => [row.key, row.value]));
  }

  clearFacts(runId: string): void {
    this.db.prepare('DELETE FROM run_facts WHERE run_id = ?').run(runId);
  }

  setStepStatus(runId: string, stepId: string, status: StepStatus, now: string, outcome: { result?: string; error?: string; waived?: boolean } = {}): void {
    const started = status === 'running' ? now : null;
    const ended = ['completed', 'failed', 'skipped', 'stopped'].includes(status) ? now : null;
    this.db
      .prepare('UPDATE steps SET status = ?, result = ?, error = ?, waived = ?, started_at = COALESCE(?, started_at), ended_at = ? WHERE run_id = ? AND id = ?')
      .run(status, this.clean(outcome.result ?? null), this.clean(outcome.error ?? null), outcome.waived ? 1 : 0, started, ended, runId, stepId);
  }

  /** One model attempt and its charge to the ledger, in one write (throwing at once when it fails), on disk before it resolves: a budget must hold across a crash. */
  recordModelAttempt(
    call: ModelCallRow,
    charge: { tokens: number; costUsd: number },
  ): Promise<void> {
    return this.durable.grouped(() => this.insertModelCall(call, charge));
  }

  /** Model requests made for a run before it could record them (its endpoint's probe), each with its charge, in one transaction. */
  recordModelRequests(calls: readonly { call: ModelCallRow; charge: { tokens: number; costUsd: number } }[]): void {
    writeTransaction(this.db, () => calls.forEach(({ call, charge }) => this.insertModelCall(call, charge)));
  }

  private insertModelCall(call: ModelCallRow, charge: { tokens: number; costUsd: number }): void {
    this.db
      .prepare(
        `INSERT INTO model_calls (id, run_id, step_id, purpose, attempt, status, prompt_tokens, completion_tokens, usage_estimated, error, started_at, ended_at, allowed_by)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(call.id, call.runId, call.stepId, call.purpose, call.attempt, call.ok ? 'completed' : 'failed', call.promptTokens, call.completionTokens, call.estimated ? 1 : 0, this.clean(call.error), call.startedAt, call.endedAt, call.allowedBy ?? null);
    this.db.prepare("INSERT INTO budget_ledger (run_id, kind, tokens, cost_usd, ts) VALUES (?, 'model_call', ?, ?, ?)").run(call.runId, charge.tokens, charge.costUsd, call.endedAt);
  }

  /** Tokens recorded for a run, failed attempts included. */
  tokensUsed(runId: string): number {
    const row = this.db.prepare('SELECT COALESCE(SUM(prompt_tokens + completion_tokens), 0) AS tokens FROM model_calls WHERE run_id = ?').get(runId) as { tokens: number };
    return row.tokens;
  }

  /** `allowedBy`: who let the call through (see AllowedBy); null for a call that never ran or was not admitted anew (a resumed one). */
  async startToolCall(call: { id: string; runId: string; stepId: string; tool: string; args: unknown; sideEffects: SideEffects; idempotent: boolean; definitionHash?: string | null; allowedBy?: string | null; executor?: string | null; now: string }): Promise<void> {
    const write = () =>
      this.db
        .prepare(
          `INSERT INTO tool_calls (id, run_id, step_id, tool, args_json, side_effects, idempotent, definition_hash, allowed_by, executor, status, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'started', ?)
           ON CONFLICT (id) DO UPDATE SET args_json = excluded.args_json, idempotent = excluded.idempotent, definition_hash = excluded.definition_hash, executor = excluded.executor, allowed_by = COALESCE(excluded.allowed_by, tool_calls.allowed_by), status = 'started', result_json = NULL, started_at = excluded.started_at, ended_at = NULL`,
        )
        .run(call.id, call.runId, call.stepId, call.tool, JSON.stringify(this.clean(call.args ?? null)), call.sideEffects, call.idempotent ? 1 : 0, call.definitionHash ?? null, call.allowedBy ?? null, call.executor ?? null, call.now);
    // A side effect about to happen must be on disk before it happens, or resume could repeat it.
    if (call.sideEffects === 'none') write();
    else await this.durable.grouped(write);
  }

  /**
   * Records a call's result with known secrets blanked out, and the end of the processes it started,
   * in one write; returns what was recorded: all anyone sees of it.
   */
  finishToolCall(call: { runId: string; id: string }, result: ToolResult, now: string): ToolResult {
    const recorded = this.clean(ToolResultSchema.parse(result));
    writeTransaction(this.db, () => {
      this.db.prepare('UPDATE tool_calls SET status = ?, result_json = ?, ended_at = ? WHERE id = ?').run(recorded.status, JSON.stringify(recorded), now, call.id);
      this.endToolProcesses(call.runId, call.id);
    });
    return recorded;
  }

  /** What the journal holds for a call id: its result when it finished, `started` with none when it was interrupted. */
  toolCall(id: string): RecordedToolCall | null {
    const row = this.db.prepare('SELECT status, args_json, result_json, idempotent, definition_hash, executor FROM tool_calls WHERE id = ?').get(id) as
      | { status: string; args_json: string; result_json: string | null; idempotent: number; definition_hash: string | null; executor: string | null }
      | undefined;
    if (!row) return null;
    const result = row.result_json === null ? null : ToolResultSchema.parse(JSON.parse(row.result_json));
    return { status: row.status, args: JSON.parse(row.args_json) as unknown, result, idempotent: row.idempotent === 1, definitionHash: row.definition_hash, executor: row.executor };
  }

  /** Every tool call of the run and of its sub-agents' runs, in the order they started. */
  treeToolCalls(runId: string): RunToolCall[] {
    const rows = this.db.prepare(`${RUN_TREE} SELECT run_id, step_id, tool, args_json, side_effects, result_json FROM tool_calls WHERE run_id IN (SELECT id FROM tree) ORDER BY started_at, rowid`).all(runId) as {
      run_id: string;
      step_id: string;
      tool: string;
      args_json: string;
      side_effects: string;
      result_json: string | null;
    }[];
    return rows.map((row) => ({ runId: row.run_id, stepId: row.step_id, tool: row.tool, args: JSON.parse(row.args_json) as unknown, sideEffects: row.side_effects, result: row.result_json === null ? null : ToolResultSchema.parse(JSON.parse(row.result_json)) }));
  }

  /**
   * Takes the run for this process unless a live one holds it: a lease whose process is gone or
   * whose heartbeat is older than `staleMs` is taken over. One process drives a run tree (a parent
   * and its sub-agents): a run above or below this one held by another live process refuses it too.
   * One transaction, so two takers race safely.
   */
  acquireLease(runId: string, pid: number, nowMs: number, staleMs: number, isAlive: (pid: number) => boolean): LeaseOutcome {
    return this.durable.now(() => {
      for (const id of [runId, ...this.treeOf(runId)]) {
        const holder = this.leaseHolder(id, nowMs, staleMs, isAlive);
        if (holder !== null && holder !== pid) return { ok: false, pid: holder, runId: id };
      }
      // A stop asked of the run's earlier process was for that drive of it, not for this one.
      this.db.prepare('UPDATE runs SET lease_pid = ?, lease_heartbeat_ms = ?, control_json = NULL WHERE id = ?').run(pid, nowMs, runId);
      return { ok: true };
    });
  }

  /** The runs above this one: the run it works for, and up. */
  ancestorIds(runId: string): string[] {
    const up = this.db
      .prepare("WITH RECURSIVE up(id) AS (SELECT json_extract(options_json, '$.parentRunId') FROM runs WHERE id = ? UNION SELECT json_extract(runs.options_json, '$.parentRunId') FROM runs JOIN up ON runs.id = up.id) SELECT id FROM up WHERE id IS NOT NULL")
      .all(runId) as { id: string }[];
    return up.map((row) => row.id);
  }

  /** The runs above this one (its parent, and up) and below it (its sub-agents, and down). */
  private treeOf(runId: string): string[] {
    const down = this.db.prepare(`${RUN_TREE} SELECT id FROM tree WHERE id <> ?`).all(runId, runId) as { id: string }[];
    return [...this.ancestorIds(runId), ...down.map((row) => row.id)];
  }

  /** False when this process no longer holds the lease (another one took it over). */
  heartbeat(runId: string, pid: number, nowMs: number): boolean {
    return this.db.prepare('UPDATE runs SET lease_heartbeat_ms = ? WHERE id = ? AND lease_pid = ?').run(nowMs, runId, pid).changes > 0;
  }

  /** The live process driving a run, if any (a holder that died or stalled past `staleMs` drives nothing). */
  leaseHolder(runId: string, nowMs: number, staleMs: number, isAlive: (pid: number) => boolean): number | null {
    const row = this.db.prepare('SELECT lease_pid, lease_heartbeat_ms FROM runs WHERE id = ?').get(runId) as { lease_pid: number | null; lease_heartbeat_ms: number | null } | undefined;
    const holder = row?.lease_pid ?? null;
    return holder !== null && isAlive(holder) && nowMs - (row?.lease_heartbeat_ms ?? 0) < staleMs ? holder : null;
  }

  /** Asks the process driving the run to act (its lease heartbeat reads this); cleared when a process takes the run (acquireLease). */
  requestControl(runId: string, control: RunControl): void {
    this.durable.now(() => this.db.prepare('UPDATE runs SET control_json = ? WHERE id = ?').run(JSON.stringify(control), runId));
  }

  controlRequest(runId: string): RunControl | null {
    const row = this.db.prepare('SELECT control_json FROM runs WHERE id = ?').get(runId) as { control_json: string | null } | undefined;
    if (!row?.control_json) return null;
    const parsed = RunControlSchema.safeParse(parseJsonOrUndefined(row.control_json));
    return parsed.success ? parsed.data : null;
  }

  releaseLease(runId: string, pid: number): void {
    this.db.prepare('UPDATE runs SET lease_pid = NULL, lease_heartbeat_ms = NULL WHERE id = ? AND lease_pid = ?').run(runId, pid);
  }

  /** A process group a tool call started, so a later process can kill it if this one dies first. */
  recordToolProcess(entry: { runId: string; callId: string; pgid: number; startTicks: string | null }): void {
    this.db.prepare('INSERT OR IGNORE INTO tool_processes (run_id, call_id, pgid, start_ticks) VALUES (?, ?, ?, ?)').run(entry.runId, entry.callId, entry.pgid, entry.startTicks);
  }

  endToolProcesses(runId: string, callId: string): void {
    this.db.prepare('UPDATE tool_processes SET ended = 1 WHERE run_id = ? AND call_id = ?').run(runId, callId);
  }

  toolProcesses(runId: string): ToolProcessRecord[] {
    const rows = this.db.prepare('SELECT call_id, pgid, start_ticks FROM tool_processes WHERE run_id = ? AND ended = 0').all(runId) as { call_id: string; pgid: number; start_ticks: string | null }[];
    return rows.map((row) => ({ callId: row.call_id, pgid: row.pgid, startTicks: row.start_ticks }));
  }

  /** Committed, not yet flushed: the answer's flush (resolveApproval) puts both on disk before anything acts on it. */
  createApproval(request: ApprovalRequest): void {
    this.db
      .prepare("INSERT INTO approvals (id, run_id, step_id, kind, action_hash, request_json, status, requested_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?)")
      .run(request.id, request.runId, request.stepId, request.kind, request.actionHash, JSON.stringify(this.clean(request)), request.requestedAt, request.expiresAt);
  }

  approvalStatus(id: string): ApprovalStatus | null {
    const row = this.db.prepare('SELECT status FROM approvals WHERE id = ?').get(id) as { status: ApprovalStatus } | undefined;
    return row?.status ?? null;
  }

  /**
   * The operator's latest answers across every run in this data dir, newest first: what adaptive autonomy reads as trust.
   * A rule's answers (`--approve auto|deny`) say nothing of a person's trust; rows from before who decided was kept count as before.
   */
  recentDecisions(limit: number): RecordedDecision[] {
    const rows = this.db
      .prepare(
        "SELECT kind, json_extract(request_json, '$.action.tool') AS tool, status FROM approvals WHERE status IN ('approved', 'edited', 'rejected', 'locked') AND (decided_by = 'operator' OR decided_by IS NULL) ORDER BY decided_at DESC, rowid DESC LIMIT ?",
      )
      .all(limit) as { kind: ApprovalKind; tool: unknown; status: ApprovalStatus }[];
    return rows.map((row) => ({ kind: row.kind, tool: typeof row.tool === 'string' ? row.tool : null, status: row.status }));
  }

  /** Requests a process asked and never saw answered (it crashed): they are asked again on resume. */
  expireStaleApprovals(runId: string, now: string): number {
    const decision = JSON.stringify({ verdict: 'reject', feedback: 'The process that asked ended before an answer; asked again on resume.' });
    return this.durable.now(() => this.db.prepare("UPDATE approvals SET status = 'expired', decision_json = ?, decided_at = ?, decided_by = 'expiry' WHERE run_id = ? AND status = 'pending'").run(decision, now, runId).changes);
  }

  /** The latest child run a parent's step started, if any. */
  childRun(parentRunId: string, parentStepId: string): RunSummary | null {
    const row = this.db
      .prepare(`SELECT ${RUN_COLUMNS} FROM runs WHERE json_extract(options_json, '$.parentRunId') = ? AND json_extract(options_json, '$.parentStepId') = ? ORDER BY created_at DESC, rowid DESC LIMIT 1`)
      .get(parentRunId, parentStepId);
    return row ? RunRowSchema.parse(row) : null;
  }

  /** What a run has spent so far (its sub-agents' runs included), and what the whole data dir spent since `dayStart`. */
  spending(runId: string, dayStart: string): { tokens: number; costUsd: number; dayTokens: number; dayCostUsd: number; modelCalls: number; toolCalls: number } {
    const run = this.db.prepare(`${RUN_TREE} SELECT COALESCE(SUM(tokens), 0) AS tokens, COALESCE(SUM(cost_usd), 0) AS cost FROM budget_ledger WHERE run_id IN (SELECT id FROM tree)`).get(runId) as { tokens: number; cost: number };
    const day = this.db.prepare('SELECT COALESCE(SUM(tokens), 0) AS tokens, COALESCE(SUM(cost_usd), 0) AS cost FROM budget_ledger WHERE ts >= ?').get(dayStart) as { tokens: number; cost: number };
    // The runaway guard counts the run's chat calls: its probe and embeddings are recorded, not counted against it.
    const calls = this.db
      .prepare("SELECT (SELECT count(*) FROM model_calls WHERE run_id = ? AND purpose NOT IN ('probe', 'embedding')) AS model, (SELECT count(*) FROM tool_calls WHERE run_id = ?) AS tool")
      .get(runId, runId) as { model: number; tool: number };
    return { tokens: run.tokens, costUsd: run.cost, dayTokens: day.tokens, dayCostUsd: day.cost, modelCalls: calls.model, toolCalls: calls.tool };
  }

  async resolveApproval(id: string, status: ApprovalStatus, decision: unknown, now: string, decider: Decider): Promise<void> {
    await this.durable.grouped(() => this.answerApproval(id, status, decision, now, decider));
  }

  /** A request answered as it was asked (by the operator's `--approve` rule): the request and its answer in one durable write. */
  async recordAnsweredApproval(request: ApprovalRequest, status: ApprovalStatus, decision: unknown, decider: Decider): Promise<void> {
    await this.durable.grouped(() => {
      this.createApproval(request);
      this.answerApproval(request.id, status, decision, request.requestedAt, decider);
    });
  }

  private answerApproval(id: string, status: ApprovalStatus, decision: unknown, now: string, decider: Decider): void {
    this.db
      .prepare('UPDATE approvals SET status = ?, decision_json = ?, decided_at = ?, decided_by = ?, decided_channel = ? WHERE id = ?')
      .run(status, JSON.stringify(this.clean(decision)), now, decider.decidedBy, decider.channel ?? null, id);
  }
}
