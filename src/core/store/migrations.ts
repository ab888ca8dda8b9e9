/**
 * Versioned schema migrations for archon.db. The database's `user_version` is the number of
 * migrations applied. Never edit a migration that has shipped: add a new one.
 */
export interface Migration {
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    name: 'runs, steps, events, settings, emergency stops',
    sql: `
      CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        goal TEXT NOT NULL,
        status TEXT NOT NULL,
        policy TEXT NOT NULL,
        options_json TEXT NOT NULL DEFAULT '{}',
        answer TEXT,
        error TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX runs_created_at ON runs (created_at);

      CREATE TABLE steps (
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        id TEXT NOT NULL,
        position INTEGER NOT NULL,
        spec_json TEXT NOT NULL,
        status TEXT NOT NULL,
        result TEXT,
        error TEXT,
        started_at TEXT,
        ended_at TEXT,
        PRIMARY KEY (run_id, id)
      ) WITHOUT ROWID;

      CREATE TABLE events (
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        type TEXT NOT NULL,
        ts TEXT NOT NULL,
        body_json TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
      ) WITHOUT ROWID;
      CREATE TRIGGER events_append_only BEFORE UPDATE ON events
      BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;

      CREATE TABLE settings (
        key TEXT PRIMARY KEY,
        value_json TEXT NOT NULL
      );

      CREATE TABLE estops (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        action TEXT NOT NULL CHECK (action IN ('trigger', 'reset')),
        triggered_by TEXT,
        reason TEXT,
        ts TEXT NOT NULL
      );
    `,
  },
  {
    name: 'model calls, tool calls, approvals, budget ledger, memory',
    sql: `
      CREATE TABLE model_calls (
        id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        step_id TEXT,
        purpose TEXT NOT NULL,
        attempt INTEGER NOT NULL DEFAULT 1,
        status TEXT NOT NULL,
        prompt_tokens INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0,
        usage_estimated INTEGER NOT NULL DEFAULT 0,
        error TEXT,
        started_at TEXT NOT NULL,
        ended_at TEXT
      );
      CREATE INDEX model_calls_run ON model_calls (run_id);

      CREATE TABLE tool_calls (
        id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        step_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        args_json TEXT NOT NULL,
        side_effects TEXT NOT NULL,
        idempotent INTEGER NOT NULL,
        status TEXT NOT NULL,
        result_json TEXT,
        started_at TEXT NOT NULL,
        ended_at TEXT
      );
      CREATE INDEX tool_calls_run ON tool_calls (run_id);

      CREATE TABLE approvals (
        id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        step_id TEXT,
        kind TEXT NOT NULL,
        action_hash TEXT NOT NULL,
        request_json TEXT NOT NULL,
        status TEXT NOT NULL,
        decision_json TEXT,
        requested_at TEXT NOT NULL,
        expires_at TEXT,
        decided_at TEXT
      );
      CREATE INDEX approvals_pending ON approvals (status);

      CREATE TABLE budget_ledger (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        tokens INTEGER NOT NULL DEFAULT 0,
        cost_usd REAL NOT NULL DEFAULT 0,
        ts TEXT NOT NULL
      );
      CREATE INDEX budget_ledger_run ON budget_ledger (run_id);

      CREATE TABLE memory (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        content TEXT NOT NULL,
        metadata_json TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL
      );
      CREATE VIRTUAL TABLE memory_vec USING vec0 (embedding float[384]);
    `,
  },
  {
    name: 'step conversations, attempts, run leases, tool process groups',
    sql: `
      ALTER TABLE steps ADD COLUMN attempt INTEGER NOT NULL DEFAULT 1;

      CREATE TABLE step_turns (
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        step_id TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        position INTEGER NOT NULL,
        message_json TEXT NOT NULL,
        PRIMARY KEY (run_id, step_id, attempt, position)
      ) WITHOUT ROWID;

      ALTER TABLE runs ADD COLUMN lease_pid INTEGER;
      ALTER TABLE runs ADD COLUMN lease_heartbeat_ms INTEGER;

      CREATE TABLE tool_processes (
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        call_id TEXT NOT NULL,
        pgid INTEGER NOT NULL,
        start_ticks TEXT,
        ended INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (run_id, call_id, pgid)
      ) WITHOUT ROWID;
    `,
  },
  {
    name: 'MCP tool definitions: the last seen, and the one the approval settings were made against',
    sql: `
      CREATE TABLE mcp_tool_definitions (
        name TEXT PRIMARY KEY,
        server TEXT NOT NULL,
        tool TEXT NOT NULL,
        hash TEXT NOT NULL,
        settings_hash TEXT,
        seen_at TEXT NOT NULL
      ) WITHOUT ROWID;
    `,
  },
  {
    name: 'scoped re-plans: the revision that added or replaced a step; steps the operator waived',
    sql: `
      ALTER TABLE steps ADD COLUMN replaced_in INTEGER;
      ALTER TABLE steps ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE steps ADD COLUMN waived INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    name: 'the MCP tool definition a call was made to, so resume can tell a changed tool from the one recorded',
    sql: `
      ALTER TABLE tool_calls ADD COLUMN definition_hash TEXT;
    `,
  },
  {
    name: 'follow-ups: the run a run continues; file effects: what each write replaced, so a run can be undone',
    sql: `
      ALTER TABLE runs ADD COLUMN follow_up_of TEXT;

      CREATE TABLE file_effects (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        call_id TEXT NOT NULL,
        path TEXT NOT NULL,
        existed INTEGER NOT NULL,
        previous BLOB,
        previous_sha256 TEXT,
        new_sha256 TEXT NOT NULL,
        undone_at TEXT
      );
      CREATE INDEX file_effects_run ON file_effects (run_id);
    `,
  },
  {
    name: 'per-run control: a stop the operator asked for, read by the process driving the run',
    sql: `
      ALTER TABLE runs ADD COLUMN control_json TEXT;
    `,
  },
  {
    name: 'the agent bus: every envelope between agents, numbered per topic, stored before it is delivered',
    sql: `
      CREATE TABLE bus_messages (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        topic TEXT NOT NULL,
        topic_seq INTEGER NOT NULL,
        correlation_id TEXT NOT NULL,
        from_agent TEXT NOT NULL,
        to_agent TEXT NOT NULL,
        kind TEXT NOT NULL,
        body TEXT NOT NULL,
        ts TEXT NOT NULL,
        UNIQUE (run_id, topic, topic_seq)
      );
      CREATE INDEX bus_messages_correlation ON bus_messages (run_id, correlation_id);
    `,
  },
];
