import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { planReply, startModelServer, type ScriptedModelServer } from '../../kit/scripted-model-server';
import { spawnArchon } from '../../support/archon-process';
import { ARCHON_BIN, builtFile } from '../../support/built';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A model whose plan request takes 4 s, past the 2 s after which a long call shows progress. */
async function slowPlanner(): Promise<string> {
  server = await startModelServer({
    reply: (request) => (request.purpose === 'plan' ? { ...planReply([{ id: 'say', description: 'Say hello' }]), delayMs: 4000 } : { content: 'hello' }),
  });
  return server.url;
}

const shellQuote = (arg: string) => `'${arg.replaceAll("'", "'\\''")}'`;

/** `archon run` with its stdout and stderr on a terminal (util-linux `script` gives it a pty); what the terminal showed. */
async function runOnTerminal(args: string[]): Promise<{ status: number | null; screen: string }> {
  builtFile('node/cli.js');
  const command = [process.execPath, ARCHON_BIN, ...args].map(shellQuote).join(' ');
  const child = spawn('script', ['-qefc', command, '/dev/null'], { env: { ...process.env, OPENAI_API_KEY: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let screen = '';
  child.stdout.on('data', (chunk: Buffer) => (screen += chunk.toString('utf8')));
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { status, screen };
}

const runArgs = (url: string) => ['run', 'say hello', '--model-url', url, '--data-dir', tempDir(), '--workspace', tempDir(), '--approve', 'auto'];

describe.skipIf(!existsSync('/usr/bin/script'))('archon run: progress for long calls (skipped without util-linux script)', () => {
  it('on a terminal, a model call past 2 s shows a spinner with the elapsed time, wiped before the next line', async () => {
    const { status, screen } = await runOnTerminal(runArgs(await slowPlanner()));
    expect(status, screen).toBe(0);
    const waiting = screen.indexOf('waiting for the model (');
    expect(waiting).toBeGreaterThan(screen.indexOf('Model scripted-model'));
    expect(waiting).toBeLessThan(screen.indexOf('Plan: 1 step(s)'));
    expect(screen.slice(waiting, screen.indexOf('Plan: 1 step(s)'))).toContain('\r\x1b[K');
    expect(screen.trimEnd().endsWith('hello')).toBe(true);
  });

  it('with --json on a terminal: only the JSON events', async () => {
    const { status, screen } = await runOnTerminal([...runArgs(await slowPlanner()), '--json']);
    expect(status, screen).toBe(0);
    expect(screen).not.toContain('waiting for');
    expect(screen.trim().split(/\r?\n/).every((line) => line.startsWith('{'))).toBe(true);
  });

  it('when stderr is not a terminal: no progress line', async () => {
    const result = await spawnArchon(runArgs(await slowPlanner()), { OPENAI_API_KEY: '' }).done;
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).not.toContain('waiting for');
  });
});
