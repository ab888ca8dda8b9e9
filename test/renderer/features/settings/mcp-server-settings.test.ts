import type { Page } from 'playwright-core';
import { describe, expect, it, vi } from 'vitest';
import { axeViolations } from '../../../support/axe';
import { ArchonStore } from '../../../../src/core/store/archon-store';
import { MASKED_SECRET } from '../../../../src/shared/mcp-secret-mask';
import { useServe } from '../../../support/archon-process';
import { useBrowser } from '../../../support/browser';
import { everythingStdio, FAILING_SERVERS } from '../../../support/mcp-servers';
import { useTempDirs } from '../../../support/temp-dir';

// A browser, a host and an MCP server on a loaded 2-core machine running the whole suite: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });

const tempDir = useTempDirs();
const startServe = useServe();
const launchBrowser = useBrowser();

async function openSettings(dataDir: string, extra: string[] = []) {
  const serve = await startServe(dataDir, ['--workspace', tempDir(), ...extra]);
  const context = await (await launchBrowser()).newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(60_000);
  await page.goto(serve.url.href);
  await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: 'Settings' }).click();
  return { page, close: () => context.close() };
}

const editor = (page: Page) => page.getByLabel('MCP servers JSON');
const savedServers = (dataDir: string) => {
  const store = ArchonStore.open(dataDir);
  try {
    return store.getSettings().mcpServers;
  } finally {
    store.close();
  }
};

describe('MCP servers in Settings, in Chromium through archon serve', () => {
  it('rejects a bad config with the path of the bad field, saves a good one, and Test lists the tools of server-everything or says what failed', async () => {
    const dataDir = tempDir();
    const { page, close } = await openSettings(dataDir, ['--trust-ui']);
    await editor(page).fill(JSON.stringify({ mcpServers: { everything: { command: 'npx', argz: ['-y'] }, remote: { url: 'not a url' } } }));
    await page.getByRole('status').filter({ hasText: 'mcpServers.everything: Unrecognized key: "argz"' }).waitFor();
    await page.getByRole('status').filter({ hasText: 'mcpServers.remote.url:' }).waitFor();
    expect(await page.getByRole('button', { name: 'Save MCP servers' }).isDisabled()).toBe(true);
    expect(await axeViolations(page)).toEqual([]);

    // archon serve has no OS keychain to seal env values with: Settings refuse them and say where to put them instead.
    await editor(page).fill(JSON.stringify({ mcpServers: { everything: { ...everythingStdio(), env: { EVERYTHING_TOKEN: 'tok-abcdef123456' } } } }));
    await page.getByRole('button', { name: 'Save MCP servers' }).click();
    await page.getByRole('alert').filter({ hasText: /EVERYTHING_TOKEN.*--mcp-config FILE/ }).waitFor();
    await page.getByRole('alert').getByRole('button', { name: 'Dismiss' }).click();

    const everything = everythingStdio();
    await editor(page).fill(JSON.stringify({ mcpServers: { everything, missing: FAILING_SERVERS.missing } }, null, 2));
    await page.getByRole('status').filter({ hasText: 'Valid: 2 servers.' }).waitFor();
    await page.getByRole('button', { name: 'Save MCP servers' }).click();
    await expect.poll(() => savedServers(dataDir)).toMatchObject({ everything, missing: FAILING_SERVERS.missing });

    await page.getByRole('button', { name: 'Test everything' }).click();
    const tools = page.getByRole('table', { name: 'Tools of everything' });
    const echo = tools.getByRole('row', { name: /everything__echo/ });
    await echo.waitFor();
    expect(await echo.getByRole('cell').first().textContent()).toBe('none, idempotent');
    expect(await tools.getByRole('row', { name: /everything__toggle-simulated-logging/ }).getByRole('cell').first().textContent()).toBe('reversible');
    await page.getByRole('button', { name: 'Test missing' }).click();
    await page.getByRole('status').filter({ hasText: /^missing failed \(not found\): .*"missing"/ }).waitFor();

    await tools.getByLabel('everything__echo approval').selectOption('always');
    const store = ArchonStore.open(dataDir);
    try {
      await expect.poll(() => store.getSettings().toolApproval['everything__echo']).toBe('always');
    } finally {
      store.close();
    }
    expect(await axeViolations(page)).toEqual([]);
    await close();
  });

  it('tests a saved server (its env masked on the page) without asking, and refuses, from the page alone, to add a server or start one that is not saved', async () => {
    const dataDir = tempDir();
    const everything = { ...everythingStdio(), env: { EVERYTHING_TOKEN: 'tok-abcdef123456' } };
    const store = ArchonStore.open(dataDir);
    store.updateSettings({ mcpServers: { everything } });
    store.close();
    const { page, close } = await openSettings(dataDir);
    expect(await editor(page).inputValue()).toContain(`"EVERYTHING_TOKEN": "${MASKED_SECRET}"`);
    expect(await page.content()).not.toContain('tok-abcdef123456');
    await page.getByRole('button', { name: 'Test everything' }).click();
    await page.getByRole('table', { name: 'Tools of everything' }).getByRole('row', { name: /everything__echo/ }).waitFor();

    await editor(page).fill(JSON.stringify({ mcpServers: { everything, shell: { command: '/bin/sh', args: ['-c', 'touch pwned'] } } }));
    await page.getByRole('button', { name: 'Save MCP servers' }).click();
    await page.getByRole('alert').filter({ hasText: /Not changed: the MCP server shell added \(command "\/bin\/sh -c touch pwned"\)/ }).waitFor();
    await page.getByRole('alert').getByRole('button', { name: 'Dismiss' }).click();
    await page.getByRole('button', { name: 'Test shell' }).click();
    await page.getByRole('alert').filter({ hasText: /Not changed: start the MCP server shell/ }).waitFor();
    expect(savedServers(dataDir)).toEqual({ everything });
    await close();
  });
});
