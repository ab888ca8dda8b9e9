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
    name: 'long-term memory: items with provenance, FTS5 over their text, their count, embeddings of any dimension (the unused memory tables go)',
    sql: `
      DROP TABLE memory_vec;
      DROP TABLE memory;

      CREATE TABLE memory_items (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL CHECK (kind IN ('fact', 'episode', 'lesson', 'preference')),
        text TEXT NOT NULL,
        source_run_id TEXT,
        source_step_id TEXT,
        evidence_json TEXT NOT NULL DEFAULT '[]',
        applies_to TEXT,
        created_at TEXT NOT NULL,
        last_used_at TEXT,
        pinned INTEGER NOT NULL DEFAULT 0
      );
      CREATE INDEX memory_items_lru ON memory_items (pinned, last_used_at, created_at);

      CREATE VIRTUAL TABLE memory_fts USING fts5 (text, content = 'memory_items', content_rowid = 'seq', tokenize = 'porter unicode61');
      CREATE TRIGGER memory_items_fts_insert AFTER INSERT ON memory_items
      BEGIN INSERT INTO memory_fts (rowid, text) VALUES (new.seq, new.text); END;
      CREATE TRIGGER memory_items_fts_delete AFTER DELETE ON memory_items
      BEGIN INSERT INTO memory_fts (memory_fts, rowid, text) VALUES ('delete', old.seq, old.text); END;
      CREATE TRIGGER memory_items_fts_update AFTER UPDATE OF text ON memory_items
      BEGIN
        INSERT INTO memory_fts (memory_fts, rowid, text) VALUES ('delete', old.seq, old.text);
        INSERT INTO memory_fts (rowid, text) VALUES (new.seq, new.text);
      END;

      CREATE TABLE memory_count (n INTEGER NOT NULL);
      INSERT INTO memory_count (n) VALUES (0);
      CREATE TRIGGER memory_items_count_insert AFTER INSERT ON memory_items BEGIN UPDATE memory_count SET n = n + 1; END;
      CREATE TRIGGER memory_items_count_delete AFTER DELETE ON memory_items BEGIN UPDATE memory_count SET n = n - 1; END;

      -- Exact vectors, for ranking; each dimension's binary-quantised copies (vec0 memory_vec_<dimensions>, made on first use) find the candidates.
      CREATE TABLE memory_embeddings (
        seq INTEGER PRIMARY KEY REFERENCES memory_items (seq) ON DELETE CASCADE,
        model TEXT NOT NULL,
        dimensions INTEGER NOT NULL,
        embedding BLOB NOT NULL
      );
      CREATE INDEX memory_embeddings_model ON memory_embeddings (model, dimensions);
    `,
  },
  {
    name: 'working memory: the notes that replace a step\'s summarised turns, and the facts a run\'s steps hand each other',
    sql: `
      CREATE TABLE step_compactions (
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        step_id TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        through INTEGER NOT NULL,
        note TEXT NOT NULL,
        PRIMARY KEY (run_id, step_id, attempt, through)
      ) WITHOUT ROWID;

      CREATE TABLE run_facts (
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (run_id, key)
      ) WITHOUT ROWID;
    `,
  },
  {
    name: 'the Dreamer: runs it has learned from, so none is dreamt twice',
    sql: `
      CREATE TABLE dreams (
        run_id TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
        dreamt_at TEXT NOT NULL,
        lessons INTEGER NOT NULL
      ) WITHOUT ROWID;
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
  {
    name: 'who let a call through (the policy without asking, a grant, or an approval), recorded on the call',
    sql: `
      ALTER TABLE tool_calls ADD COLUMN allowed_by TEXT;
      ALTER TABLE model_calls ADD COLUMN allowed_by TEXT;
    `,
  },
  {
    name: "the last message to an agent found by index, not by reading the run's whole bus (once per hand-off)",
    sql: `CREATE INDEX bus_messages_to ON bus_messages (run_id, to_agent, kind, seq);`,
  },
  {
    name: "a step's validations found by index, not by reading the run's events (once per approval packet)",
    sql: `CREATE INDEX events_validation ON events (run_id, json_extract(body_json, '$.stepId'), seq) WHERE type = 'validation.completed';`,
  },
  {
    name: 'who answered an approval (a person and where, a rule, or no one in time), kept with the answer',
    sql: `
      ALTER TABLE approvals ADD COLUMN decided_by TEXT;
      ALTER TABLE approvals ADD COLUMN decided_channel TEXT;
      UPDATE approvals SET decided_by = 'expiry' WHERE status = 'expired';
    `,
  },
  {
    name: "the endpoint's last probe per server and model, so a run soon after another sends no probe request",
    sql: `
      CREATE TABLE endpoint_probes (
        base_url TEXT NOT NULL,
        model TEXT NOT NULL,
        context_setting INTEGER,
        probe_json TEXT NOT NULL,
        probed_at TEXT NOT NULL,
        PRIMARY KEY (base_url, model)
      ) WITHOUT ROWID;
    `,
  },
  {
    name: "each run's kind: a goal carried out, or a dream (the Dreamer's run, charged and stopped like any run)",
    sql: `ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'goal';`,
  },
  {
    name: "each run's workspace pinned when it starts (real path, device, inode): resume and undo refuse another folder at that path",
    sql: `
      ALTER TABLE runs ADD COLUMN workspace_real TEXT;
      ALTER TABLE runs ADD COLUMN workspace_dev TEXT;
      ALTER TABLE runs ADD COLUMN workspace_ino TEXT;
    `,
  },
  {
    name: "why a write's previous content was not kept for undo (it held a known secret), when it was not",
    sql: `ALTER TABLE file_effects ADD COLUMN previous_withheld TEXT;`,
  },
  {
    name: 'a deleted run leaves a tombstone (no cascade): the auditor tells a deletion by Archon from rows removed behind its back',
    sql: `
      CREATE TABLE run_deletions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL,
        last_seq INTEGER NOT NULL,
        ts TEXT NOT NULL
      );
    `,
  },
  {
    name: "each memory's workspace (the one its runs worked in) and whether it is global: recall keeps to the run's workspace and global items; lessons kept before were recalled everywhere and stay global",
    sql: `
      ALTER TABLE memory_items ADD COLUMN workspace TEXT;
      ALTER TABLE memory_items ADD COLUMN global INTEGER NOT NULL DEFAULT 0;
      UPDATE memory_items SET global = 1 WHERE (source_run_id IS NULL AND evidence_json = '[]') OR kind = 'lesson';
      UPDATE memory_items SET workspace = (
        SELECT CASE WHEN count(*) = count(runs.workspace) AND count(DISTINCT runs.workspace) = 1 THEN max(runs.workspace) END
        FROM (SELECT memory_items.source_run_id AS id WHERE memory_items.source_run_id IS NOT NULL UNION SELECT e.value FROM json_each(memory_items.evidence_json) e) item_runs
        LEFT JOIN (SELECT r.id, coalesce(r.workspace_real, json_extract(r.options_json, '$.workspace')) AS workspace FROM runs r) runs ON runs.id = item_runs.id
      );
      CREATE INDEX memory_items_workspace ON memory_items (workspace);
    `,
  },
  {
    name: 'where a tool call ran when not on this machine (a Restate cluster): a resume asks that cluster again for it, never another',
    sql: `ALTER TABLE tool_calls ADD COLUMN executor TEXT;`,
  },
];
