import { spawn, type ChildProcess } from 'node:child_process';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { groupRunning, pollUntil, signal } from '../process/process-liveness';

export interface StdioLaunch {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** The largest message the server may send (default `DEFAULT_MAX_MESSAGE_BYTES`). */
  maxMessageBytes?: number;
}

/** How a stdio server's process ended, for the message that says why a session broke. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last lines it wrote to stderr. */
  stderr: string;
  /** Why Archon stopped it, when it did (a message over the limit). */
  reason?: string;
}

const STDERR_LINES = 10;
const KILL_WAIT_MS = 5000;
export const DEFAULT_MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

function mebibytes(bytes: number): string {
  return `${Math.round((bytes / (1024 * 1024)) * 100) / 100} MiB`;
}

/**
 * A stdio MCP transport whose server leads a process group of its own, so the whole tree can be
 * killed at once (the emergency stop), and which keeps the exit status and the tail of stderr.
 */
export class StdioServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | null = null;
  private readonly buffer: ReadBuffer;
  private readonly maxMessageBytes: number;
  private stderrTail: string[] = [];
  private exitInfo: ProcessExit | null = null;
  private spawnError: NodeJS.ErrnoException | null = null;
  private stopReason: string | undefined;

  constructor(private readonly launch: StdioLaunch) {
    this.maxMessageBytes = launch.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.buffer = new ReadBuffer({ maxBufferSize: this.maxMessageBytes });
  }

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  get exit(): ProcessExit | null {
    return this.exitInfo;
  }

  get failedToStart(): NodeJS.ErrnoException | null {
    return this.spawnError;
  }

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.launch.file, this.launch.args, { cwd: this.launch.cwd, env: this.launch.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true, windowsHide: true });
      this.child = child;
      child.on('error', (error: NodeJS.ErrnoException) => {
        this.spawnError = error;
        reject(error);
        this.onerror?.(error);
      });
      child.on('spawn', () => resolve());
      child.on('close', (code, signalName) => {
        this.exitInfo = { code, signal: signalName, stderr: this.stderrTail.join('\n'), ...(this.stopReason ? { reason: this.stopReason } : {}) };
        this.child = null;
        this.onclose?.();
      });
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('data', (chunk: Buffer) => this.receive(chunk));
      child.stderr?.on('data', (chunk: Buffer) => {
        const lines = [...this.stderrTail, ...chunk.toString('utf8').split('\n').filter((line) => line.trim() !== '')];
        this.stderrTail = lines.slice(-STDERR_LINES);
      });
    });
  }

  /** A message past the limit would hold the whole stream (a line with no end): the server is stopped, its calls fail naming the limit. */
  private receive(chunk: Buffer): void {
    if (this.stopReason) return;
    try {
      this.buffer.append(chunk);
    } catch {
      this.stopReason = `sent a message larger than ${mebibytes(this.maxMessageBytes)} (the limit of one message; raise "maxMessageBytes" in its configuration if its results are that large), so it was stopped`;
      const pid = this.child?.pid;
      if (pid !== undefined) signal(-pid, 'SIGKILL');
      return;
    }
    this.readMessages();
  }

  private readMessages(): void {
    for (;;) {
      try {
        const message = this.buffer.readMessage();
        if (message === null) return;
        this.onmessage?.(message);
      } catch (error) {
        this.onerror?.(error as Error);
      }
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      const stdin = this.child?.stdin;
      if (!stdin || stdin.destroyed) throw new Error('the server is not running');
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /** Ends the server: its stdin closed, then its whole process group killed, and waited for. */
  async close(): Promise<void> {
    const pid = this.child?.pid;
    this.child?.stdin?.end();
    if (pid !== undefined) await killGroup(pid);
    this.buffer.clear();
  }
}

/** SIGKILL to the group (a bwrap sandbox takes everything inside with it), then waits until nothing of it runs. */
export async function killGroup(pgid: number): Promise<void> {
  signal(-pgid, 'SIGKILL');
  await pollUntil(() => !groupRunning(pgid), KILL_WAIT_MS);
}
