import type { SqliteDatabase } from './open-database';

export interface SeenDefinition {
  /** The hash seen before this one, when it differs (the definition changed). */
  changedFrom: string | null;
  /**
   * How the operator's approval settings stand to this definition: made against it (`bound`), made
   * before the tool was ever seen (`unbound`: the policy alone decides), or made against another
   * definition (`stale`: every call asks). A definition that changed while no settings were made for
   * the tool is `stale` too: the policy's answer was given for the old one.
   */
  settings: 'bound' | 'unbound' | 'stale';
}

/**
 * The MCP tools Archon has seen, each with the hash of its last definition and the hash its approval
 * settings were made against. A setting applies only to the definition it was made for: only the
 * operator setting it again (Settings) binds it to a new one, never a one-off approval of a call.
 */
export class ToolDefinitionStore {
  constructor(private readonly db: SqliteDatabase) {}

  /** Records a definition as seen; a tool seen for the first time has no settings made against it yet. */
  see(name: string, server: string, tool: string, hash: string, now: string): SeenDefinition {
    const row = this.db.prepare('SELECT hash, settings_hash FROM mcp_tool_definitions WHERE name = ?').get(name) as { hash: string; settings_hash: string | null } | undefined;
    const changed = row !== undefined && row.hash !== hash;
    const settingsHash = changed ? (row.settings_hash ?? row.hash) : (row?.settings_hash ?? null);
    this.db
      .prepare('INSERT INTO mcp_tool_definitions (name, server, tool, hash, settings_hash, seen_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET hash = excluded.hash, settings_hash = excluded.settings_hash, seen_at = excluded.seen_at')
      .run(name, server, tool, hash, settingsHash, now);
    return { changedFrom: changed ? row.hash : null, settings: settingsHash === null ? 'unbound' : settingsHash === hash ? 'bound' : 'stale' };
  }

  /** The operator set these approval settings (a tool name, or `SERVER__*`): they apply to the definitions seen now. */
  settingsChanged(keys: readonly string[]): void {
    const rebind = this.db.prepare("UPDATE mcp_tool_definitions SET settings_hash = hash WHERE name = ? OR (substr(?, -3) = '__*' AND server = substr(?, 1, length(?) - 3))");
    for (const key of keys) rebind.run(key, key, key, key);
  }
}
