import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import type { Readable } from 'node:stream';
import type { ToolResult } from '../../shared/schemas/tool';
import { TOOL_LIMITS, type BuiltinToolInput } from '../../shared/tools/catalogue';
import { commandLaunch } from '../sandbox/confine';
import { result, type ExecutorContext } from './tool-context';

/** bwrap's JSON status names the sandbox's init; the runtime kills and waits on it, and with it every process inside. */
function watchSandboxInit(stream: Readable, report: (pid: number) => void): void {
  let text = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    text += chunk;
    try {
      const pid = (JSON.parse(text) as { 'child-pid'?: unknown })['child-pid'];
      if (typeof pid === 'number') report(pid);
    } catch {
      // Not all of it yet.
    }
  });
}

/**
 * `/bin/sh -c COMMAND` in the workspace under the platform's OS sandbox (or refused where there is
 * none), in a process group of its own reported to the runtime, which kills it on timeout or stop
 * and waits until it is gone; its output is capped.
 */
export function runCommand(args: BuiltinToolInput<'run_command'>, context: ExecutorContext): Promise<ToolResult> {
  const launch = commandLaunch(args.command, context.workspace, context.confinement);
  if (launch.kind === 'refused') return Promise.resolve(result('denied', launch.reason, { refused: 'sandbox_unavailable' }));
  return new Promise((resolve) => {
    const extra = launch.infoFd === undefined ? [] : (['pipe'] as const);
    const child = spawn(launch.file, launch.args, { cwd: launch.cwd, env: launch.env, detached: true, stdio: ['ignore', 'pipe', 'pipe', ...extra] });
    const pgid = child.pid;
    if (pgid !== undefined) {
      context.onSpawn({ pgid });
      const info = child.stdio[3] as Readable | undefined;
      if (info) watchSandboxInit(info, (sandboxPid) => context.onSpawn({ pgid, sandboxPid }));
    }
    const chunks: Buffer[] = [];
    let captured = 0;
    let dropped = 0;
    const capture = (chunk: Buffer) => {
      const room = TOOL_LIMITS.outputBytes - captured;
      if (room > 0) chunks.push(chunk.subarray(0, room));
      captured += Math.min(room, chunk.length);
      dropped += Math.max(0, chunk.length - Math.max(room, 0));
    };
    child.stdout?.on('data', capture);
    child.stderr?.on('data', capture);
    const cleanUp = () => {
      if (launch.tmp) rmSync(launch.tmp, { recursive: true, force: true });
    };
    child.on('error', (error) => {
      cleanUp();
      resolve(result('error', `The command could not start: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      cleanUp();
      const output = Buffer.concat(chunks).toString('utf8') + (dropped > 0 ? `\n[output truncated: ${dropped} more bytes]` : '');
      const exit = code ?? (signal ? `killed by ${signal}` : 'unknown');
      resolve(result(code === 0 ? 'success' : 'error', `exit code ${exit}\n${output}`.trimEnd(), { exitCode: code, signal, sandbox: launch.kind }));
    });
  });
}
