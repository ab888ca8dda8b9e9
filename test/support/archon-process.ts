import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterEach } from 'vitest';
import { ARCHON_BIN, builtFile } from './built';
import { RunEventSchema, type RunEvent } from '../../src/shared/schemas/events';

/** The events `archon run --json` printed, one JSON object a line, each checked against the event schema. */
export function eventsOf(stdout: string): RunEvent[] {
  return stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => RunEventSchema.parse(JSON.parse(line)));
}

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built `archon` command to its end, synchronously: only for commands that need no server in this process. */
export function runArchon(args: string[], env: NodeJS.ProcessEnv = {}): CliResult {
  builtFile('node/cli.js');
  const result = spawnSync(process.execPath, [ARCHON_BIN, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 20_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Starts the built `archon` command; the scripted model server in this process stays responsive. */
export function spawnArchon(args: string[], env: NodeJS.ProcessEnv = {}): { child: ChildProcess; done: Promise<CliResult> } {
  builtFile('node/cli.js');
  const child = spawn(process.execPath, [ARCHON_BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const done = new Promise<CliResult>((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
  return { child, done };
}

/**
 * The built `archon` with stdin piped, answering each approval its terminal asks (`--approve prompt`):
 * `answer(kind)` says yes or no, and a no's feedback is left empty.
 */
export function spawnArchonAnswering(args: string[], answer: (kind: string) => boolean, env: NodeJS.ProcessEnv = {}): { child: ChildProcess; done: Promise<CliResult> } {
  builtFile('node/cli.js');
  const child = spawn(process.execPath, [ARCHON_BIN, ...args], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let answered = 0;
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
    const prompts = [...stderr.matchAll(/Approval needed \((\w+)\)|Feedback for the agent/g)];
    for (const prompt of prompts.slice(answered)) child.stdin?.write(prompt[1] === undefined ? '\n' : answer(prompt[1]) ? 'y\n' : 'n\n');
    answered = prompts.length;
  });
  const done = new Promise<CliResult>((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
  return { child, done };
}

export interface ServeProcess {
  child: ChildProcess;
  firstLine: string;
  url: URL;
  token: string;
  origin: string;
}

/** `archon serve --port 0` in a child process; stopped after the test. */
export function useServe(): (dataDir: string, extraArgs?: string[]) => Promise<ServeProcess> {
  const children: ChildProcess[] = [];
  afterEach(async () => {
    await Promise.all(
      children.splice(0).map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      ),
    );
  });
  return async (dataDir, extraArgs = []) => {
    builtFile('node/cli.js');
    const child = spawn(process.execPath, [ARCHON_BIN, 'serve', '--port', '0', '--data-dir', dataDir, ...extraArgs], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    const firstLine = await new Promise<string>((resolve, reject) => {
      lines.once('line', resolve);
      child.once('exit', (code) => reject(new Error(`archon serve exited with ${code} before printing its URL`)));
    });
    const url = new URL(firstLine.replace(/^Archon UI: /, ''));
    return { child, firstLine, url, token: url.searchParams.get('token') ?? '', origin: url.origin };
  };
}
