import type { Page } from 'playwright-core';
import { describe, expect, it, vi } from 'vitest';
import { useServe } from '../../../support/archon-process';
import { axeViolations } from '../../../support/axe';
import { useBrowser } from '../../../support/browser';
import { overflowOf } from '../../../support/layout';
import { seedRuns } from '../../../support/stored-runs';
import { useTempDirs } from '../../../support/temp-dir';
import { lookAway, notificationsOf, openWatchedPage } from '../../../support/page-notifications';

// A browser and a host on a loaded 2-core machine running the whole suite: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });
const startServe = useServe();
const launchBrowser = useBrowser();
const tempDir = useTempDirs();

const FITS = { scrollsSideways: false, outside: [] };
const NIGHTLY_FIRED_AT = '2030-01-02T03:00:00.000Z';
const LATE_FIRED_AT = '2030-01-03T03:00:00.000Z';
const LATE_GOAL = `Summarise the overnight test failures in the payments service and suggest which commits to look at first, ${'with details '.repeat(6)}`;

/** The app in Chromium, at 1024×700, through `archon serve` on `dataDir`, its notifications watched and allowed. */
async function openServe(dataDir: string): Promise<Page> {
  const serve = await startServe(dataDir, ['--workspace', tempDir()]);
  return openWatchedPage(await launchBrowser(), serve);
}

const inboxEntry = (page: Page) => page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: 'Inbox', exact: true });

/** What the Inbox entry's count says to assistive technology (null: no count). */
const unseenCount = (page: Page) =>
  inboxEntry(page).evaluate((button) => {
    const id = button.getAttribute('aria-describedby');
    return id ? (document.getElementById(id)?.textContent ?? null) : null;
  });

const listedGoals = (page: Page) => page.getByRole('list', { name: 'Inbox' }).getByRole('heading', { level: 2 }).allTextContents();

describe('the Inbox view (Chromium through archon serve)', () => {
  it('lists the runs workers drove, latest first; opens one in the Runs view; shows and notifies a run that lands while the page is open', async () => {
    const dataDir = tempDir();
    const [nightly] = seedRuns(dataDir, [
      { goal: 'Check the nightly backups', status: 'completed', dispatch: { scheduleId: 'nightly', firedAt: NIGHTLY_FIRED_AT } },
      { goal: 'Rotate the staging certificates', status: 'failed', dispatch: { scheduleId: null, firedAt: null } },
      { goal: 'A run from the terminal', status: 'completed' },
    ]);
    const page = await openServe(dataDir);

    await expect.poll(() => unseenCount(page)).toBe('2 unseen');
    // The count is beside the name, not in it.
    expect(await page.getByRole('navigation', { name: 'Main' }).ariaSnapshot()).toMatch(/^- navigation "Main":\n {2}- button "Runs"( \[pressed\])?\n {2}- button "Inbox"\n/);
    expect(await inboxEntry(page).locator('[aria-hidden="true"]').textContent()).toBe('2');

    await inboxEntry(page).click();
    await page.getByRole('heading', { name: 'Inbox', level: 1 }).waitFor();
    await page.getByText("Runs that workers of a Restate cluster drove: schedules' runs and detached ones, once they end or wait for you.").waitFor();
    expect(await listedGoals(page)).toEqual(['Rotate the staging certificates', 'Check the nightly backups']);
    const items = page.getByRole('list', { name: 'Inbox' }).getByRole('listitem');
    expect(await items.nth(0).locator('.inbox-facts').textContent()).toMatch(/^failed · sent with --detach · /);
    expect(await items.nth(1).locator('.inbox-facts').textContent()).toMatch(/^completed · schedule nightly · /);
    expect(await items.nth(1).locator('time').getAttribute('datetime')).toBe(NIGHTLY_FIRED_AT);
    // Seen once listed with the Inbox open: the count goes.
    await expect.poll(() => unseenCount(page)).toBe(null);
    expect(await inboxEntry(page).getAttribute('aria-current')).toBe('page');
    expect(await axeViolations(page)).toEqual([]);
    expect(await overflowOf(page)).toEqual(FITS);

    await items.nth(1).getByRole('button', { name: 'Open run' }).click();
    await page.getByRole('heading', { name: 'Check the nightly backups', level: 2 }).waitFor();
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: 'Runs', exact: true }).getAttribute('aria-current')).toBe('page');
    await page.getByText(`Run ${nightly?.slice(0, 8)}`).waitFor();

    // The operator looks away; a schedule's run ends in another process.
    await lookAway(page);
    seedRuns(dataDir, [{ goal: LATE_GOAL, status: 'completed', dispatch: { scheduleId: 'nightly', firedAt: LATE_FIRED_AT } }]);
    await expect.poll(() => unseenCount(page), { timeout: 30_000 }).toBe('1 unseen');
    const [notice, ...more] = await notificationsOf(page);
    expect(more).toEqual([]);
    expect(notice?.title).toBe('Archon: a run is in your inbox');
    expect(notice?.body.length).toBeLessThanOrEqual(120);
    expect(notice?.body.endsWith('…')).toBe(true);
    expect(LATE_GOAL.startsWith(notice?.body.slice(0, -1) ?? '-')).toBe(true);

    await inboxEntry(page).click();
    expect(await listedGoals(page)).toEqual([LATE_GOAL, 'Rotate the staging certificates', 'Check the nightly backups']);
    await expect.poll(() => unseenCount(page)).toBe(null);
    expect(await overflowOf(page)).toEqual(FITS);
  });

  it('says so when nothing is in the inbox', async () => {
    const dataDir = tempDir();
    seedRuns(dataDir, [{ goal: 'A run from the terminal', status: 'completed' }]);
    const page = await openServe(dataDir);
    expect(await unseenCount(page)).toBe(null);
    await inboxEntry(page).click();
    await page.getByText('Nothing in the inbox.').waitFor();
    expect(await page.getByRole('list', { name: 'Inbox' }).count()).toBe(0);
    expect(await axeViolations(page)).toEqual([]);
    expect(await overflowOf(page)).toEqual(FITS);
  });
});
