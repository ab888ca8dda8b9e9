import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { _electron as electron, type ElectronApplication, type Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { ArchonStore } from '../../src/core/store/archon-store';
import { planReply, startModelServer, stepIdOf, type ScriptedModelServer } from '../kit/scripted-model-server';
import { axeViolations } from '../support/axe';
import { builtFile } from '../support/built';
import { overflowOf } from '../support/layout';
import { useTempDirs } from '../support/temp-dir';

const tempDir = useTempDirs();

/**
 * The Electron binary is downloaded from GitHub on first use, which this workplace cannot reach.
 * Look for it the way the electron package does, without `require('electron')`, which would try
 * the download.
 */
function electronBinary(): { path: string } | { missing: string } {
  const packageDir = fileURLToPath(new URL('../../node_modules/electron/', import.meta.url));
  const pathFile = `${packageDir}path.txt`;
  if (!existsSync(pathFile)) return { missing: 'the Electron binary is not installed (node_modules/electron/path.txt is absent; the download cannot reach GitHub here)' };
  const path = `${packageDir}dist/${readFileSync(pathFile, 'utf8').trim()}`;
  return existsSync(path) ? { path } : { missing: `no Electron binary at ${path}` };
}

const binary = electronBinary();
const skipReason = 'missing' in binary ? binary.missing : null;
if (skipReason) console.warn(`Electron end-to-end tests skipped: ${skipReason}.`);

/** A data dir whose settings point at the scripted server. */
function dataDirFor(server: ScriptedModelServer): string {
  const dataDir = tempDir();
  const store = ArchonStore.open(dataDir);
  try {
    store.updateSettings({ modelUrl: server.url });
  } finally {
    store.close();
  }
  return dataDir;
}

/** The app on a data dir; its default workspace, the folder it starts in, is a throwaway one. */
function launch(dataDir: string): Promise<ElectronApplication> {
  return electron.launch({
    executablePath: 'path' in binary ? binary.path : undefined,
    args: [builtFile('main/index.js')],
    cwd: tempDir(),
    env: { ...process.env, ARCHON_DATA_DIR: dataDir },
  });
}

/** The window's content at a size, then whether anything leaves it and what axe finds. */
async function checkedAt(app: ElectronApplication, page: Page, size: { width: number; height: number }, screen: string) {
  await app.evaluate(({ BrowserWindow }, { width, height }) => BrowserWindow.getAllWindows()[0]?.setContentSize(width, height), size);
  await page.waitForFunction(({ width }) => window.innerWidth === width, size);
  return { screen, size: `${size.width}×${size.height}`, overflow: await overflowOf(page), axe: await axeViolations(page) };
}

const SIZES = [
  { width: 1440, height: 900 },
  { width: 1024, height: 700 },
];

describe.skipIf(skipReason !== null)(`the Electron app${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  let server: ScriptedModelServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('opens the window with the Emergency stop button, and the page has no Node and no raw ipcRenderer', async () => {
    const app = await launch(tempDir());
    try {
      const window = await app.firstWindow();
      await window.getByRole('button', { name: 'Emergency stop' }).waitFor();
      const exposed = await window.evaluate(() => ({
        require: typeof (globalThis as { require?: unknown }).require,
        process: typeof (globalThis as { process?: unknown }).process,
        bridge: Object.keys((globalThis as { archon?: object }).archon ?? {}).sort(),
      }));
      expect(exposed).toEqual({ require: 'undefined', process: 'undefined', bridge: ['commands', 'onEvent'] });
    } finally {
      await app.close();
    }
  });

  it('fits Runs with an approval open, Settings, Audit and Memory in the window at 1440×900 and 1024×700, with no axe violation', async () => {
    server = await startModelServer({
      reply: (request) => {
        if (request.purpose === 'plan') return planReply([{ id: 'notes', description: 'Write the summary to notes.md' }]);
        if (request.purpose === 'final') return { content: 'The summary is in notes.md.' };
        const replied = request.body.messages?.some((message) => message.role === 'tool');
        return stepIdOf(request) === 'notes' && !replied ? { toolCalls: [{ name: 'write_file', arguments: { path: 'notes.md', content: '# Summary\n' } }] } : { content: 'Done' };
      },
    });
    const app = await launch(dataDirFor(server));
    try {
      const window = await app.firstWindow();
      await window.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
      await window.getByLabel('Goal').fill('Summarise the project into notes.md');
      await window.getByRole('button', { name: 'Run', exact: true }).click();
      await window.getByRole('dialog', { name: 'Approval: plan' }).getByRole('button', { name: 'Approve' }).click();
      const toolDialog = window.getByRole('dialog', { name: 'Approval: tool call' });
      await toolDialog.waitFor();
      const findings = [];
      for (const size of SIZES) findings.push(await checkedAt(app, window, size, 'Runs with an approval open'));
      await toolDialog.getByRole('button', { name: 'Approve' }).click();
      await window.getByRole('dialog', { name: 'Approval: final answer' }).getByRole('button', { name: 'Approve' }).click();
      await window.getByLabel('Answer', { exact: true }).waitFor();
      for (const size of SIZES) findings.push(await checkedAt(app, window, size, 'Runs'));
      for (const screen of ['Settings', 'Audit', 'Memory']) {
        await window.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: screen }).click();
        await window.getByRole('heading', { name: screen, exact: true, level: 1 }).waitFor();
        for (const size of SIZES) findings.push(await checkedAt(app, window, size, screen));
      }
      expect(findings.filter((finding) => finding.overflow.scrollsSideways || finding.overflow.outside.length > 0 || finding.axe.length > 0)).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
