import { canonicalJson } from '../../shared/canonical-json';
import type { McpServerConfig } from '../../shared/schemas/settings';
import { McpSession } from './mcp-session';
import type { Confinement } from './stdio-launch';

/** How long a server may take to start, initialize and list its tools. */
export const MCP_START_TIMEOUT_MS = 30_000;

interface Entry {
  session: McpSession;
  ready: Promise<McpSession>;
}

/**
 * The MCP sessions of one process (one per data dir): a server is started on first use and kept for
 * later calls and runs of the same configuration and workspace; one that broke (crashed, killed by
 * the emergency stop) is started afresh on the next use.
 */
export class McpSessions {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly startTimeoutMs = MCP_START_TIMEOUT_MS) {}

  /** The live session of this server, started when needed; a start failure throws McpServerError. */
  async session(name: string, config: McpServerConfig, confinement: Confinement, signal: AbortSignal): Promise<McpSession> {
    const key = canonicalJson({ name, config, confinement });
    const entry = this.entries.get(key);
    // A start under way is shared; a session that broke since is replaced.
    const existing = entry ? await entry.ready.catch(() => null) : null;
    if (existing?.alive) return existing;
    const session = new McpSession({ name, config, confinement, startTimeoutMs: this.startTimeoutMs });
    const ready = session.start(AbortSignal.any([signal, AbortSignal.timeout(this.startTimeoutMs + 1000)])).then(() => session);
    this.entries.set(key, { session, ready });
    try {
      return await ready;
    } catch (error) {
      if (this.entries.get(key)?.session === session) this.entries.delete(key);
      throw error;
    }
  }

  /** The emergency stop: every server's process tree killed at once; the next use starts new ones. */
  async stopAll(): Promise<void> {
    const sessions = [...this.entries.values()].map((entry) => entry.session);
    this.entries.clear();
    await Promise.allSettled(sessions.map((session) => session.kill()));
  }

  async close(): Promise<void> {
    const sessions = [...this.entries.values()].map((entry) => entry.session);
    this.entries.clear();
    await Promise.allSettled(sessions.map((session) => session.close()));
  }
}
