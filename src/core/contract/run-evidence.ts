import { statSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import type { RunContext } from '../run/run-context';
import type { RunToolCall } from '../store/run-store';
import { workspacePath } from './goal-reading';

/** What the run recorded, asked about one claim at a time: each answer names the evidence, or says why there is none. */
export type Found = { found: true; evidence: string } | { found: false; detail: string };

export interface RunEvidence {
  /** A write of `path` by the run (or a sub-agent below it), and the file in the workspace now. */
  write(path: string): Found;
  /** A run of `command`, whatever its exit code. */
  commandRan(command: string): Found;
  /** A run of `command` that exited 0. */
  commandSuccess(command: string): Found;
  /** Calls whose outcome is unknown: started before a crash, not repeated without a person's word. */
  unknownOutcomes(): string[];
}

function where(context: RunContext, call: RunToolCall): string {
  return call.runId === context.runId ? `step ${call.stepId}` : `sub-agent run ${call.runId.slice(0, 8)}, step ${call.stepId}`;
}

function argument(call: RunToolCall, name: string): string | null {
  const value = (call.args as Record<string, unknown> | null)?.[name];
  return typeof value === 'string' ? value : null;
}

const succeeded = (call: RunToolCall) => call.result?.status === 'success';
const squeezed = (text: string) => text.trim().replace(/\s+/g, ' ');

/** The path as the workspace names it; null for one outside it. */
function inWorkspace(workspace: string, path: string): string | null {
  return workspacePath(isAbsolute(path) ? relative(workspace, path) : path);
}

/** Whether a command line runs `wanted`: one of its parts (split at `&&`, `||`, `;`, `|`) is it, or it with more arguments. */
function runs(line: string, wanted: string): boolean {
  return line.split(/&&|\|\||;|\|/).some((part) => {
    const command = squeezed(part);
    return command === wanted || command.startsWith(`${wanted} `);
  });
}

/** Whether a call was passed this path (or a path ending in it) in any of its arguments. */
function passes(args: unknown, path: string): boolean {
  if (typeof args === 'string') return args === path || args.endsWith(`/${path}`);
  if (Array.isArray(args)) return args.some((item) => passes(item, path));
  return typeof args === 'object' && args !== null && Object.values(args).some((item) => passes(item, path));
}

const sameCall = (a: RunToolCall, b: RunToolCall) => a.tool === b.tool && JSON.stringify(a.args) === JSON.stringify(b.args);

function modifiedSince(file: string, since: number): boolean | null {
  try {
    return statSync(file).mtimeMs >= since;
  } catch {
    return null;
  }
}

/**
 * The run's evidence, read from its journal (every tool call of the run tree, with its result) and the
 * workspace. A file counts as written when a `write_file` of it succeeded, or when it changed on disk
 * during the run after a command ran (a script can write too); either way it must still be there.
 */
export function runEvidence(context: RunContext): RunEvidence {
  const calls = context.runs.treeToolCalls(context.runId);
  const workspace = context.options.workspace;
  const startedAt = Date.parse(context.runs.getRun(context.runId)?.summary.createdAt ?? '') || 0;
  const commandsRan = calls.some((call) => call.tool === 'run_command' && call.result !== null);
  return {
    write(path) {
      const wanted = inWorkspace(workspace, path);
      if (wanted === null) return { found: false, detail: `${path} is outside the workspace, where no tool writes.` };
      const onDisk = modifiedSince(join(workspace, wanted), startedAt);
      const writes = calls.filter((call) => call.tool === 'write_file' && succeeded(call) && inWorkspace(workspace, argument(call, 'path') ?? '') === wanted);
      const last = writes.at(-1);
      if (last && onDisk !== null) return { found: true, evidence: `${wanted} written by write_file (${where(context, last)})` };
      // Another tool with side effects (an MCP server's) that was passed the file's name and succeeded made it where it keeps files.
      const elsewhere = calls.findLast((call) => call.tool !== 'write_file' && call.sideEffects !== 'none' && succeeded(call) && passes(call.args, wanted));
      if (elsewhere) return { found: true, evidence: `${wanted} written by ${elsewhere.tool} (${where(context, elsewhere)})` };
      if (last) return { found: false, detail: `${wanted} was written (${where(context, last)}) but is no longer in the workspace.` };
      if (onDisk === true && commandsRan) return { found: true, evidence: `${wanted} changed in the workspace during the run (after a command ran)` };
      return { found: false, detail: onDisk === null ? `no write of ${wanted} was recorded, and it is not in the workspace.` : `no write of ${wanted} was recorded in this run.` };
    },
    commandRan(command) {
      const wanted = squeezed(command);
      const ran = calls.findLast((call) => call.tool === 'run_command' && call.result !== null && runs(argument(call, 'command') ?? '', wanted));
      return ran ? { found: true, evidence: `\`${squeezed(argument(ran, 'command') ?? wanted)}\` ran (${where(context, ran)})` } : { found: false, detail: `\`${wanted}\` was never run.` };
    },
    commandSuccess(command) {
      const wanted = squeezed(command);
      const ran = calls.filter((call) => call.tool === 'run_command' && runs(argument(call, 'command') ?? '', wanted));
      const passed = ran.findLast(succeeded);
      if (passed) return { found: true, evidence: `\`${squeezed(argument(passed, 'command') ?? wanted)}\` exited 0 (${where(context, passed)})` };
      const last = ran.at(-1);
      if (!last) return { found: false, detail: `\`${wanted}\` was never run.` };
      return { found: false, detail: `\`${wanted}\` did not succeed (${where(context, last)}): ${(last.result?.content ?? 'no result was recorded').split('\n')[0] ?? ''}` };
    },
    unknownOutcomes() {
      // A call made again, the same, and succeeding settles the doubt about the one cut short.
      return calls
        .filter((call, index) => call.result?.metadata.outcome === 'unknown' && !calls.slice(index + 1).some((later) => sameCall(later, call) && succeeded(later)))
        .map((call) => `${call.tool} in ${where(context, call)} may or may not have happened: it was interrupted and not run again`);
    },
  };
}
