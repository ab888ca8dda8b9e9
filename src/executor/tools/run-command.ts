import { spawn } from 'node:child_process';
import type { ToolResult } from '../../shared/schemas/tool';
import { TOOL_LIMITS, type BuiltinToolInput } from '../../shared/tools/catalogue';
import { result, type ExecutorContext } from './tool-context';

/** The only variables a command sees: nothing secret from Archon's own environment. */
function minimalEnvironment(workspace: string): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', HOME: workspace, LANG: 'C.UTF-8', TERM: 'dumb' };
}

/**
 * `/bin/sh -c COMMAND` in the workspace, in a process group of its own (reported to the runtime,
 * which kills the whole group on timeout or stop), with its output capped.
 */
export function runCommand(args: BuiltinToolInput<'run_command'>, context: ExecutorContext): Promise<ToolResult> {
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', args.command], { cwd: context.workspace, env: minimalEnvironment(context.workspace), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    if (child.pid !== undefined) context.onSpawn(child.pid);
    const chunks: Buffer[] = [];
    let captured = 0;
    let dropped = 0;
    const capture = (chunk: Buffer) => {
      const room = TOOL_LIMITS.outputBytes - captured;
      if (room > 0) chunks.push(chunk.subarray(0, room));
      captured += Math.min(room, chunk.length);
      dropped += Math.max(0, chunk.length - Math.max(room, 0));
    };
    child.stdout.on('data', capture);
    child.stderr.on('data', capture);
    child.on('error', (error) => resolve(result('error', `The command could not start: ${error.message}`)));
    child.on('close', (code, signal) => {
      const output = Buffer.concat(chunks).toString('utf8') + (dropped > 0 ? `\n[output truncated: ${dropped} more bytes]` : '');
      const exit = code ?? (signal ? `killed by ${signal}` : 'unknown');
      resolve(result(code === 0 ? 'success' : 'error', `exit code ${exit}\n${output}`.trimEnd(), { exitCode: code, signal }));
    });
  });
}
