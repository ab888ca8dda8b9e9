import type { SqliteDatabase } from './open-database';

export interface SeenDefinition {
  /** The hash seen before this one, when it differs (the definition changed). */
  changedFrom: string | null;
  /** Whether the operator's approval settings for the tool were made against this definition. */
  settingsApply: boolean;
}

/**
 * The MCP tools Archon has seen, each with the hash of its last definition and the hash its approval
 * settings were made against. A setting applies only to the definition it was made for: a changed
 * definition is asked for until the operator approves a call to it or sets it again.
 */
export class ToolDefinitionStore {
  constructor(private readonly db: SqliteDatabase) {}

  /** Records a definition as seen; the first definition seen is the one the current settings apply to. */
  see(name: string, server: string, tool: string, hash: string, now: string): SeenDefinition {
    const row = this.db.prepare('SELECT hash, settings_hash FROM mcp_tool_definitions WHERE name = ?').get(name) as { hash: string; settings_hash: string | null } | undefined;
    const settingsHash = row?.settings_hash ?? hash;
    this.db
      .prepare('INSERT INTO mcp_tool_definitions (name, server, tool, hash, settings_hash, seen_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET hash = excluded.hash, settings_hash = excluded.settings_hash, seen_at = excluded.seen_at')
      .run(name, server, tool, hash, settingsHash, now);
    return { changedFrom: row && row.hash !== hash ? row.hash : null, settingsApply: settingsHash === hash };
  }

  /** A person approved a call to this definition: the tool's settings apply to it from now on. */
  bindSettings(name: string, hash: string): void {
    this.db.prepare('UPDATE mcp_tool_definitions SET settings_hash = ? WHERE name = ?').run(hash, name);
  }

  /** The operator changed these approval settings (a tool name, or `SERVER__*`): they apply to the definitions seen now, or next. */
  settingsChanged(keys: readonly string[]): void {
    const rebind = this.db.prepare("UPDATE mcp_tool_definitions SET settings_hash = hash WHERE name = ? OR (substr(?, -3) = '__*' AND server = substr(?, 1, length(?) - 3))");
    for (const key of keys) rebind.run(key, key, key, key);
  }
}
