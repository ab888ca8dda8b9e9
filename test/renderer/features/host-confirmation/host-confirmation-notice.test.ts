import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { axeViolations } from '../../../support/axe';
import { ARCHON_BIN, builtFile } from '../../../support/built';
import { useBrowser } from '../../../support/browser';
import { EVERYTHING_SCRIPT, everythingStdio } from '../../../support/mcp-servers';
import { useTempDirs } from '../../../support/temp-dir';

// A browser, a host on a terminal and an MCP server on a loaded 2-core machine: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });

const tempDir = useTempDirs();
const launchBrowser = useBrowser();
const running: ChildProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map(stopOnTerminal));
});

const quoted = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`;

/** Ctrl-C on the terminal, as the operator would stop it; `script -e` ends with the host. */
async function stopOnTerminal(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.stdin?.write('\x03');
  const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(killer);
}

/** `archon serve` without --trust-ui on a terminal of its own (util-linux `script` gives it a pty): what the terminal showed, and a way to type on it. */
async function serveOnTerminal(dataDir: string, workspace: string) {
  builtFile('node/cli.js');
  const command = [process.execPath, ARCHON_BIN, 'serve', '--port', '0', '--data-dir', dataDir, '--workspace', workspace].map(quoted).join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'inherit'] });
  running.push(child);
  let screen = '';
  child.stdout?.on('data', (chunk: Buffer) => (screen += chunk.toString('utf8')));
  await expect.poll(() => /Archon UI: (\S+)/.exec(screen)?.[1], { timeout: 60_000 }).toBeTruthy();
  const url = /Archon UI: (\S+)/.exec(screen)?.[1] ?? '';
  return { url, screen: () => screen, type: (text: string) => child.stdin?.write(text) };
}

describe.skipIf(!existsSync('/usr/bin/script'))('a change the terminal must confirm, in Chromium through archon serve (skipped without util-linux script)', () => {
  it('shows the question in the page while the terminal has not answered (also in a page opened meanwhile), then the answer, and the change goes ahead only on yes', async () => {
    const host = await serveOnTerminal(tempDir(), tempDir());
    const page = await (await launchBrowser()).newPage({ viewport: { width: 1280, height: 800 } });
    page.setDefaultTimeout(60_000);
    await page.goto(host.url);
    await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: 'Settings' }).click();
    await page.getByLabel('MCP servers JSON').fill(JSON.stringify({ mcpServers: { everything: everythingStdio() } }));
    await page.getByRole('button', { name: 'Test everything' }).click();

    const question = page.getByRole('alert', { name: 'Confirm in the terminal running archon serve' });
    await question.waitFor();
    const asked = await question.textContent();
    expect(asked).toContain('Start an MCP server you have not allowed?');
    expect(asked).toContain(`start the MCP server everything (command "${process.execPath} ${EVERYTHING_SCRIPT} stdio") to list its tools`);
    await expect.poll(host.screen).toContain('Allow? [y/N]');
    await page.getByRole('status').filter({ hasText: 'Starting everything and listing its tools…' }).waitFor();
    expect(await page.getByRole('table', { name: 'Tools of everything' }).count()).toBe(0);
    expect(await axeViolations(page)).toEqual([]);
    // A page opened while the question waits learns of it from the host.
    const late = await (await launchBrowser()).newPage({ viewport: { width: 1280, height: 800 } });
    await late.goto(host.url);
    await late.getByRole('alert', { name: 'Confirm in the terminal running archon serve' }).filter({ hasText: 'Start an MCP server you have not allowed?' }).waitFor();
    await late.close();

    host.type('y\r');
    await question.waitFor({ state: 'detached' });
    await page.getByRole('status', { name: 'Terminal’s reply' }).filter({ hasText: 'Allowed in the terminal: Start an MCP server you have not allowed?' }).waitFor();
    await page.getByRole('table', { name: 'Tools of everything' }).getByRole('row', { name: /everything__echo/ }).waitFor();

    await page.getByRole('button', { name: 'Test everything' }).click();
    await question.waitFor();
    await expect.poll(() => host.screen().split('Allow? [y/N]').length).toBe(3);
    host.type('n\r');
    await question.waitFor({ state: 'detached' });
    await page.getByRole('status', { name: 'Terminal’s reply' }).filter({ hasText: 'Refused in the terminal: Start an MCP server you have not allowed?' }).waitFor();
    await page.getByRole('alert').filter({ hasText: /Not changed: start the MCP server everything/ }).waitFor();
    await page.close();
  });
});
