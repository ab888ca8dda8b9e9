import { canonicalJson } from '../../shared/canonical-json';
import type { McpServerConfig } from '../../shared/schemas/settings';
import { raceAbort } from '../../shared/abort';
import { McpServerError } from './mcp-failure';
import { McpSession } from './mcp-session';
import type { Log } from '../log';
import type { Confinement } from './stdio-launch';

/** How long a server may take to start, initialize and list its tools. */
export const MCP_START_TIMEOUT_MS = 30_000;

interface Entry {
  session: McpSession;
  ready: Promise<McpSession>;
}

/** How many times a caller looks again when another caller replaced the entry while it waited. */
const MAX_LOOKS = 8;

/**
 * The MCP sessions of one process (one per data dir): a server is started on first use and kept for
 * later calls and runs of the same configuration and workspace; one that broke (crashed, killed by
 * the emergency stop) is started afresh on the next use. A start is shared by every caller that
 * waits for it and has a signal of its own: one run's stop ends that run's wait, not the start.
 * Every session started is known until it is closed, so the emergency stop and close reach each.
 */
export class McpSessions {
  private readonly entries = new Map<string, Entry>();
  private readonly started = new Set<McpSession>();
  private lifetime = new AbortController();

  constructor(
    private readonly startTimeoutMs = MCP_START_TIMEOUT_MS,
    private readonly log?: Log,
  ) {}

  /** The live session of this server, started when needed; a start failure throws McpServerError. */
  async session(name: string, config: McpServerConfig, confinement: Confinement, signal: AbortSignal): Promise<McpSession> {
    const key = canonicalJson({ name, config, confinement });
    for (let look = 0; look < MAX_LOOKS; look++) {
      const entry = this.entries.get(key) ?? this.startEntry(key, name, config, confinement);
      const session = await this.waitFor(name, entry.ready, signal);
      if (session.alive) return session;
      // Broken since it started: replaced, unless another caller already did while this one waited.
      if (this.entries.get(key) === entry) {
        this.forget(key, entry);
        await entry.session.close();
      }
    }
    throw new McpServerError({ kind: 'crashed', message: `MCP server "${name}" broke each time it was started (${MAX_LOOKS} tries).` });
  }

  /** Installed before any wait, so two callers never start the same server twice; a failed start is forgotten (every waiter gets its failure). */
  private startEntry(key: string, name: string, config: McpServerConfig, confinement: Confinement): Entry {
    const session = new McpSession({ name, config, confinement, startTimeoutMs: this.startTimeoutMs, log: this.log });
    this.started.add(session);
    const ready = session.start(AbortSignal.any([this.lifetime.signal, AbortSignal.timeout(this.startTimeoutMs + 1000)])).then(() => session);
    const entry = { session, ready };
    this.entries.set(key, entry);
    ready.catch(() => this.forget(key, entry));
    return entry;
  }

  private forget(key: string, entry: Entry): void {
    if (this.entries.get(key) === entry) this.entries.delete(key);
    this.started.delete(entry.session);
  }

  /** The started session, or the start's failure; a stopped caller stops waiting while the start goes on for the others. */
  private async waitFor(name: string, ready: Promise<McpSession>, signal: AbortSignal): Promise<McpSession> {
    try {
      return await raceAbort(ready, signal);
    } catch (error) {
      if (error instanceof McpServerError || !signal.aborted) throw error;
      throw new McpServerError({ kind: 'timeout', message: `MCP server "${name}" was not ready when the run was stopped.` });
    }
  }

  /** The emergency stop: every server's process tree killed at once, starts under way ended; the next use starts new ones. */
  async stopAll(): Promise<void> {
    const sessions = this.takeAll();
    await Promise.allSettled(sessions.map((session) => session.kill()));
  }

  async close(): Promise<void> {
    const sessions = this.takeAll();
    await Promise.allSettled(sessions.map((session) => session.close()));
  }

  private takeAll(): McpSession[] {
    this.lifetime.abort();
    this.lifetime = new AbortController();
    const sessions = [...this.started];
    this.started.clear();
    this.entries.clear();
    return sessions;
  }
}
