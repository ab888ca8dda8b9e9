import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ElicitRequestSchema, ErrorCode, McpError, ToolListChangedNotificationSchema, type CallToolResult, type ElicitRequest, type ElicitResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from '../../shared/schemas/settings';
import type { Log } from '../log';
import { McpServerError, type McpFailure } from './mcp-failure';
import { stdioLaunch, type Confinement } from './stdio-launch';
import { killGroup, StdioServerTransport } from './stdio-transport';

const CLIENT_INFO = { name: 'archon', version: '0.1.0' };
/** tools/list pages followed at most: a server that never stops paging is a protocol error. */
const MAX_PAGES = 100;
/** Refreshes run back to back for notifications that came during the last one, at most: a server that never stops changing is re-listed on its next notification. */
const MAX_REFRESH_ROUNDS = 8;

/**
 * A call never answered: the connection broke (the server died) while it was in flight, so the
 * server may have acted on it. `how` says how the server ended.
 */
export class McpCallLost extends McpServerError {
  constructor(
    readonly server: string,
    readonly tool: string,
    readonly how: string,
  ) {
    super({ kind: 'crashed', message: `MCP server "${server}" ${how} during the call to ${tool}; it will be started again on the next call.` });
    this.name = 'McpCallLost';
  }
}

/** Who answers a server's elicitation/create: the run whose call is in flight. */
export type ElicitationHandler = (request: ElicitRequest['params'], signal: AbortSignal) => Promise<ElicitResult>;

export interface SessionOptions {
  name: string;
  config: McpServerConfig;
  confinement: Confinement;
  /** How long initialize and tools/list may take. */
  startTimeoutMs: number;
  /** Where a declined elicitation says why (the runtime log). */
  log?: Log;
}

function stderrTail(stderr: string): string {
  return stderr ? ` Its last stderr lines:\n${stderr}` : '';
}

function isStartTimeout(error: unknown, signal: AbortSignal): boolean {
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) return true;
  return signal.aborted && (signal.reason as Error | undefined)?.name === 'TimeoutError';
}

/**
 * One connection to one MCP server: started (stdio inside the sandbox, or Streamable HTTP with SSE as
 * the fallback), initialized (the SDK negotiates the protocol version), its tools listed, calls made
 * with a signal and a timeout. A session that broke stays broken; the manager starts a new one.
 */
export class McpSession {
  private client: Client | null = null;
  /** The client last created: only its closing breaks the session (not a failed first attempt's). */
  private latest: Client | null = null;
  private transport: Transport | null = null;
  private toolList: Tool[] = [];
  private closed = false;
  private exitNote = '';
  private refreshing = false;
  private changedAgain = false;
  /** The calls in flight, each by who answers its elicitations (an object per call, so two calls of one run stay two). */
  private readonly inFlight = new Set<{ elicit: ElicitationHandler }>();

  constructor(private readonly options: SessionOptions) {}

  get name(): string {
    return this.options.name;
  }

  get alive(): boolean {
    return this.client !== null && !this.closed;
  }

  get tools(): readonly Tool[] {
    return this.toolList;
  }

  /** Starts the server and lists its tools; a failure says which of not found, crashed, timed out, protocol error. */
  async start(signal: AbortSignal): Promise<void> {
    const { name, config } = this.options;
    try {
      if ('command' in config) await this.connectStdio(signal);
      else await this.connectHttp(new URL(config.url), config.headers ?? {}, signal);
      this.toolList = await this.listTools(signal);
    } catch (error) {
      // A timeout is judged before the server is killed, so our own kill does not read as a crash; a crash after, once its exit is known.
      const timedOut = isStartTimeout(error, signal);
      await this.close();
      if (error instanceof McpServerError) throw error;
      throw new McpServerError(timedOut ? this.timeoutFailure() : this.startFailure(error, signal));
    }
    if (this.closed) throw new McpServerError({ kind: 'crashed', message: `MCP server "${name}" ${this.exitNote || 'closed its connection'} right after it started.` });
  }

  private timeoutFailure(): McpFailure {
    const { name, startTimeoutMs, config } = this.options;
    return { kind: 'timeout', message: `MCP server "${name}" did not answer initialize within ${Math.round(startTimeoutMs / 1000)} s. Check that it speaks MCP on ${'command' in config ? 'stdin/stdout' : 'that URL'}.` };
  }

  private startFailure(error: unknown, signal: AbortSignal): McpFailure {
    const { name } = this.options;
    if (signal.aborted) return { kind: 'timeout', message: `MCP server "${name}" was not ready when the run was stopped.` };
    if (this.exitNote) return { kind: 'crashed', message: `MCP server "${name}" ${this.exitNote}` };
    const text = error instanceof Error ? error.message : String(error);
    if ('url' in this.options.config && /fetch failed|ECONNREFUSED|ENOTFOUND|EHOSTUNREACH/i.test(`${text} ${String((error as { cause?: unknown }).cause ?? '')}`)) {
      return { kind: 'unreachable', message: `MCP server "${name}" could not be reached at ${new URL(this.options.config.url).origin}: ${text}. Start it, or fix "url".` };
    }
    return { kind: 'protocol', message: `MCP server "${name}" failed the MCP handshake: ${text}` };
  }

  private newClient(): Client {
    const client = new Client(CLIENT_INFO, { capabilities: { elicitation: { form: {} } } });
    this.latest = client;
    this.closed = false;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.refreshTools());
    client.setRequestHandler(ElicitRequestSchema, (request, extra) => this.elicit(request.params, extra.signal));
    client.onclose = () => {
      if (this.latest === client) this.closed = true;
    };
    return client;
  }

  /** Over stdio an elicitation does not say which call it belongs to: it goes to the call in flight when there is one, else it is declined. */
  /** One tools/list refresh at a time: notifications that arrive during it ask for one more, not one each. */
  private async refreshTools(): Promise<void> {
    if (this.refreshing) {
      this.changedAgain = true;
      return;
    }
    this.refreshing = true;
    try {
      for (let round = 0; round < MAX_REFRESH_ROUNDS && this.alive; round++) {
        this.changedAgain = false;
        this.toolList = await this.listTools(AbortSignal.timeout(this.options.startTimeoutMs));
        if (!this.changedAgain) return;
      }
    } catch {
      // The next call finds the session broken, or the old list still valid.
    } finally {
      this.refreshing = false;
    }
  }

  private async elicit(params: ElicitRequest['params'], signal: AbortSignal): Promise<ElicitResult> {
    const calls = [...this.inFlight];
    if (calls.length === 1) return calls[0]!.elicit(params, signal);
    const { name, log } = this.options;
    log?.warn({ server: name, callsInFlight: calls.length }, `MCP server "${name}" asked for input (elicitation) with ${calls.length} calls in flight; declined: the request does not say which call, so no run can be asked.`);
    return { action: 'decline' };
  }

  private async connectStdio(signal: AbortSignal): Promise<void> {
    const { name, config, confinement, startTimeoutMs } = this.options;
    if (!('command' in config)) return;
    const launch = stdioLaunch(name, config, confinement);
    if (!launch.ok) throw new McpServerError(launch.failure);
    const transport = new StdioServerTransport(launch.launch);
    this.transport = transport;
    const client = this.newClient();
    const onClose = client.onclose;
    client.onclose = () => {
      const exit = transport.exit;
      if (exit) this.exitNote = exit.reason ?? `exited (${exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`}).${stderrTail(exit.stderr)}`;
      onClose?.();
    };
    try {
      await client.connect(transport, { signal, timeout: startTimeoutMs });
    } catch (error) {
      if (transport.failedToStart) throw new McpServerError({ kind: 'not_found', message: `MCP server "${name}" could not be started: ${transport.failedToStart.message}.` });
      throw error;
    }
    this.client = client;
  }

  private async connectHttp(url: URL, headers: Record<string, string>, signal: AbortSignal): Promise<void> {
    const requestInit = { headers };
    const streamable = new StreamableHTTPClientTransport(url, { requestInit });
    const client = this.newClient();
    try {
      this.transport = streamable;
      await client.connect(streamable, { signal, timeout: this.options.startTimeoutMs });
      this.client = client;
    } catch (error) {
      // Servers of the older protocol answer the Streamable HTTP POST with a 4xx: try the SSE transport.
      if (!(error instanceof StreamableHTTPError) || error.code === undefined || error.code < 400 || error.code >= 500) throw error;
      await client.close();
      const sse = new SSEClientTransport(url, { requestInit });
      const fallback = this.newClient();
      this.transport = sse;
      await fallback.connect(sse, { signal, timeout: this.options.startTimeoutMs });
      this.client = fallback;
    }
  }

  private async listTools(signal: AbortSignal): Promise<Tool[]> {
    const client = this.requireClient();
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const result = await client.listTools(cursor ? { cursor } : undefined, { signal, timeout: this.options.startTimeoutMs });
      tools.push(...result.tools);
      cursor = result.nextCursor;
      if (!cursor) return tools;
    }
    throw new McpServerError({ kind: 'protocol', message: `MCP server "${this.options.name}" kept paging tools/list past ${MAX_PAGES} pages.` });
  }

  private requireClient(): Client {
    if (!this.client || this.closed) throw new McpServerError({ kind: 'crashed', message: `MCP server "${this.options.name}" ${this.exitNote || 'is not connected'}` });
    return this.client;
  }

  /** One tools/call; an abort sends notifications/cancelled (the SDK does), a connection that broke during it is McpCallLost. */
  async callTool(tool: string, args: Record<string, unknown>, signal: AbortSignal, timeoutMs: number, elicit: ElicitationHandler): Promise<CallToolResult> {
    const client = this.requireClient();
    const call = { elicit };
    this.inFlight.add(call);
    try {
      return (await client.callTool({ name: tool, arguments: args }, undefined, { signal, timeout: timeoutMs })) as CallToolResult;
    } catch (error) {
      if (this.closed && !signal.aborted) throw new McpCallLost(this.options.name, tool, this.exitNote || 'closed its connection.');
      throw error;
    } finally {
      this.inFlight.delete(call);
    }
  }

  /** Kills a stdio server's whole process group at once (the emergency stop), then closes. */
  async kill(): Promise<void> {
    const pid = this.transport instanceof StdioServerTransport ? this.transport.pid : null;
    this.closed = true;
    if (pid !== null) await killGroup(pid);
    await this.close();
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = null;
    try {
      if (client) await client.close();
      else await this.transport?.close();
    } catch {
      // Closing what already broke.
    }
  }
}
