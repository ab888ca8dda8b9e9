import { describe, expect, it, vi } from 'vitest';
import { ArchonStore } from '../../../../src/core/store/archon-store';
import { useServe } from '../../../support/archon-process';
import { axeViolations } from '../../../support/axe';
import { useBrowser } from '../../../support/browser';
import { overflowOf } from '../../../support/layout';
import { everythingStdio } from '../../../support/mcp-servers';
import { useTempDirs } from '../../../support/temp-dir';

// A browser and a host on a loaded 2-core machine running the whole suite: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });

const tempDir = useTempDirs();
const startServe = useServe();
const launchBrowser = useBrowser();

/** Settings with something in every table: a priced model, an MCP server with a long command, a role of the operator's. */
function seededDataDir(): string {
  const dataDir = tempDir();
  const store = ArchonStore.open(dataDir);
  try {
    store.updateSettings({
      modelPrices: { 'a-remote-model-with-a-rather-long-name-2026-11-27': { inputPerMillion: 3, outputPerMillion: 15 } },
      mcpServers: { everything: everythingStdio() },
      roles: { researcher: { description: 'Finds sources', tools: ['read_file', 'http_get'] } },
    });
  } finally {
    store.close();
  }
  return dataDir;
}

describe('Settings fit the window, in Chromium through archon serve', () => {
  it('at 1440×900 and at 1024×700: one column, no sideways scrolling, every control inside the window, and no axe violation', async () => {
    const serve = await startServe(seededDataDir(), ['--workspace', tempDir()]);
    const context = await (await launchBrowser()).newContext({ viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(60_000);
    await page.goto(serve.url.href);
    await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: 'Settings' }).click();
    await page.getByRole('button', { name: 'Remove role researcher' }).waitFor();

    for (const viewport of [
      { width: 1440, height: 900 },
      { width: 1024, height: 700 },
    ]) {
      await page.setViewportSize(viewport);
      expect(await overflowOf(page), `at ${viewport.width}×${viewport.height}`).toEqual({ scrollsSideways: false, outside: [] });
      expect(await axeViolations(page), `at ${viewport.width}×${viewport.height}`).toEqual([]);
    }
    await context.close();
  });
});
