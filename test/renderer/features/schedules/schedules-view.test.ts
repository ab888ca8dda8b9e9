import type { Page } from 'playwright-core';
import { describe, expect, it, vi } from 'vitest';
import { ArchonStore } from '../../../../src/core/store/archon-store';
import { ScheduleStateSchema, type ScheduleState } from '../../../../src/shared/schemas/run-order';
import { spawnArchon, useServe } from '../../../support/archon-process';
import { axeViolations } from '../../../support/axe';
import { useBrowser } from '../../../support/browser';
import { overflowOf } from '../../../support/layout';
import { useRestate, type RestateServer } from '../../../support/restate';
import { useTempDirs } from '../../../support/temp-dir';

// A Restate server, a worker, a host and a browser on a loaded 2-core machine: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 240_000 });
const tempDir = useTempDirs();
const restate = useRestate();
const startServe = useServe();
const launchBrowser = useBrowser();

const FITS = { scrollsSideways: false, outside: [] };

/** A real Restate server and one worker on its own data dir, serving `workspace`; the desk's data dir has the cluster in its Settings. */
async function clusterInSettings(dataDir: string, workspace: string): Promise<RestateServer> {
  const cluster = await restate.server();
  const secretFile = restate.secretFile();
  await restate.worker(cluster, { id: 'w1', workspace, dataDir: tempDir(), secretFile });
  const store = ArchonStore.open(dataDir);
  try {
    store.updateSettings({ cluster: { ingress: cluster.ingress, admin: cluster.admin, secretFile } });
  } finally {
    store.close();
  }
  return cluster;
}

/** The app in Chromium at 1024×700 through `archon serve` on `dataDir`, showing the Schedules view. */
async function openSchedules(dataDir: string, serveArgs: string[]): Promise<Page> {
  const serve = await startServe(dataDir, serveArgs);
  const page = await (await launchBrowser()).newPage({ viewport: { width: 1024, height: 700 } });
  page.setDefaultTimeout(60_000);
  await page.goto(serve.url.href);
  await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: 'Schedules', exact: true }).click();
  await page.getByRole('heading', { name: 'Schedules', level: 1 }).waitFor();
  return page;
}

/** What `archon schedule list --json` prints for the cluster: what the cluster keeps, seen from outside the page. */
async function listedByCli(cluster: RestateServer): Promise<{ status: number | null; stdout: string; schedules: ScheduleState[] }> {
  const { status, stdout } = await spawnArchon(['schedule', 'list', '--json', '--restate-ingress', cluster.ingress, '--restate-admin', cluster.admin]).done;
  const schedules = stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => ScheduleStateSchema.parse(JSON.parse(line)));
  return { status, stdout, schedules };
}

/** The text of each cell of each row of the table's body. */
const tableRows = (page: Page) => page.getByRole('table', { name: 'Schedules' }).locator('tbody tr').evaluateAll((rows) => rows.map((row) => [...row.children].map((cell) => cell.textContent ?? '')));

describe('the Schedules view (Chromium through archon serve, a real Restate cluster)', () => {
  it('lists, adds and removes the schedules of the cluster in Settings, as the CLI sees them; shows a refused cron in the view', async () => {
    const dataDir = tempDir();
    const workspace = tempDir();
    const cluster = await clusterInSettings(dataDir, workspace);
    const page = await openSchedules(dataDir, ['--trust-ui', '--workspace', workspace]);
    const view = page.getByRole('region', { name: 'Schedules' });

    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('button').allTextContents()).toEqual(['Runs', 'Inbox', 'Schedules', 'Audit', 'Memory', 'Models', 'Settings']);
    await view.getByText('Goals the workers of your Restate cluster run on a cron schedule, while this desk is closed. Their runs land in the Inbox.').waitFor();
    await view.getByText('No schedules.').waitFor();
    expect(await view.getByRole('table').count()).toBe(0);

    const form = page.getByRole('form', { name: 'New schedule' });
    const submit = form.getByRole('button', { name: 'Add schedule' });
    expect(await form.getByLabel('Cron').getAttribute('placeholder')).toBe('0 7 * * *');
    expect(await form.getByRole('textbox', { name: 'Cron' }).evaluate((input) => document.getElementById(input.getAttribute('aria-describedby') ?? '')?.textContent)).toBe("minute hour day-of-month month day-of-week, in the workers' time zone");
    expect(await form.getByLabel('Approvals').inputValue()).toBe('deny');
    expect(await submit.isDisabled()).toBe(true);
    await form.getByLabel('Goal').fill('summarise the day');
    expect(await submit.isDisabled()).toBe(true);
    await form.getByLabel('Cron').fill('0 7 * * *');
    await form.getByLabel('Name (optional)').fill('morning');
    await form.getByLabel('Approvals').selectOption({ label: 'yes (auto)' });
    await submit.click();

    await page.getByRole('table', { name: 'Schedules' }).waitFor();
    const kept = await listedByCli(cluster);
    expect(kept.status).toBe(0);
    expect(kept.schedules).toMatchObject([{ id: 'morning', schedule: { goal: 'summarise the day', cron: '0 7 * * *', approve: 'auto' } }]);
    const next = kept.schedules[0]?.next ?? '';
    const [row, ...more] = await tableRows(page);
    expect(more).toEqual([]);
    expect(row?.slice(0, 4)).toEqual(['morning', 'summarise the day', '0 7 * * *', 'answered yes']);
    expect(row?.[4]).not.toBe('');
    expect(await page.getByRole('table', { name: 'Schedules' }).locator('time').getAttribute('datetime')).toBe(next);
    // The form clears once the schedule is kept.
    expect(await form.getByLabel('Goal').inputValue()).toBe('');
    expect(await form.getByLabel('Name (optional)').inputValue()).toBe('');
    expect(await form.getByLabel('Approvals').inputValue()).toBe('deny');
    expect(await submit.isDisabled()).toBe(true);
    expect(await axeViolations(page)).toEqual([]);
    expect(await overflowOf(page)).toEqual(FITS);

    await form.getByLabel('Goal').fill('summarise the week');
    await form.getByLabel('Cron').fill('0 7 * *');
    await submit.click();
    await view.getByRole('alert').filter({ hasText: 'is not a cron schedule Archon reads' }).waitFor();
    expect(await form.getByLabel('Cron').inputValue()).toBe('0 7 * *');
    expect((await tableRows(page)).map(([id]) => id)).toEqual(['morning']);
    expect((await listedByCli(cluster)).schedules.map(({ id }) => id)).toEqual(['morning']);
    expect(await axeViolations(page)).toEqual([]);
    expect(await overflowOf(page)).toEqual(FITS);

    await view.getByRole('button', { name: 'Remove schedule morning' }).click();
    await view.getByText('No schedules.').waitFor();
    expect(await view.getByRole('table').count()).toBe(0);
    // The removal went through, so the refused cron's reason is gone with it.
    expect(await view.getByRole('alert').count()).toBe(0);
    const { stdout } = await spawnArchon(['schedule', 'list', '--restate-ingress', cluster.ingress, '--restate-admin', cluster.admin]).done;
    expect(stdout).toBe('No schedules.\n');
  });

  it('says what to do when no cluster is set in Settings', async () => {
    const page = await openSchedules(tempDir(), ['--workspace', tempDir()]);
    const view = page.getByRole('region', { name: 'Schedules' });
    await view.getByRole('alert').waitFor();
    expect(await view.getByRole('alert').textContent()).toBe('No Restate cluster is set in Settings → Engine: set one to keep schedules there.');
    expect(await view.getByRole('table').count()).toBe(0);
    expect(await view.getByText('No schedules.').count()).toBe(0);
    expect(await axeViolations(page)).toEqual([]);
    expect(await overflowOf(page)).toEqual(FITS);
  });
});
