import { describe, expect, it, vi } from 'vitest';
import { ArchonStore } from '../../src/core/store/archon-store';
import { runArchon, useServe } from '../support/archon-process';
import { axeViolations } from '../support/axe';
import { useBrowser } from '../support/browser';
import { useTempDirs } from '../support/temp-dir';

// A browser, a host and a run on a loaded 2-core machine running the whole suite: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });

const tempDir = useTempDirs();
const startServe = useServe();
const launchBrowser = useBrowser();

async function openApp(dataDir: string) {
  const serve = await startServe(dataDir);
  const browser = await launchBrowser();
  const page = await (await browser.newContext()).newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  await page.goto(serve.url.href);
  return { page, problems };
}

describe('renderer shell in Chromium through archon serve', () => {
  it('loads with the Emergency stop button, the navigation and a live connection, without CSP or script errors', async () => {
    const { page, problems } = await openApp(tempDir());
    await page.getByRole('button', { name: 'Emergency stop' }).waitFor();
    for (const entry of ['Runs', 'Audit', 'Settings']) {
      expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: entry }).isVisible()).toBe(true);
    }
    await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
    expect(problems).toEqual([]);
    await page.close();
  });

  it('keeps the Emergency stop button on every screen', async () => {
    const { page } = await openApp(tempDir());
    for (const entry of ['Audit', 'Settings', 'Runs']) {
      await page.getByRole('button', { name: entry }).click();
      await page.getByRole('heading', { name: entry }).waitFor();
      expect(await page.getByRole('button', { name: 'Emergency stop' }).isVisible()).toBe(true);
    }
    await page.close();
  });

  it('latches the stop on one press, shows Re-arm, and re-arms; the latch is in the database', async () => {
    const dataDir = tempDir();
    const { page } = await openApp(dataDir);
    await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
    await page.getByRole('button', { name: 'Emergency stop' }).click();
    await page.getByRole('button', { name: 'Re-arm' }).waitFor();
    const store = ArchonStore.open(dataDir);
    try {
      expect(store.estopState()).toMatchObject({ latched: true, triggeredBy: 'operator' });
      await page.getByRole('button', { name: 'Re-arm' }).click();
      await page.getByRole('button', { name: 'Re-arm' }).waitFor({ state: 'detached' });
      expect(store.estopState().latched).toBe(false);
    } finally {
      store.close();
    }
    await page.close();
  });

  it('shows a stop latched from another process (archon estop) when the page loads', async () => {
    const dataDir = tempDir();
    expect(runArchon(['estop', '--data-dir', dataDir]).status).toBe(0);
    const { page } = await openApp(dataDir);
    await page.getByRole('alert').filter({ hasText: 'Emergency stop latched' }).waitFor();
    // The top bar and the banner, over the Audit and Memory screens, in both themes.
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      await expect.poll(() => page.evaluate(() => document.documentElement.dataset.theme)).toBe(colorScheme);
      for (const entry of ['Audit', 'Memory']) {
        await page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: entry }).click();
        await page.getByRole('heading', { name: entry, level: 1 }).waitFor();
        expect(await axeViolations(page), `${entry}, ${colorScheme}`).toEqual([]);
      }
    }
    await page.close();
  });

  it('saves a setting and applies the theme', async () => {
    const dataDir = tempDir();
    const { page } = await openApp(dataDir);
    await page.getByRole('button', { name: 'Settings' }).click();
    await page.getByLabel('Theme').selectOption('dark');
    await expect.poll(() => page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    const store = ArchonStore.open(dataDir);
    try {
      expect(store.getSettings().theme).toBe('dark');
    } finally {
      store.close();
    }
    await page.close();
  });
});
