import type { Page } from 'playwright-core';
import { describe, expect, it, vi } from 'vitest';
import { planReply, type PlanStepScript } from '../../../kit/scripted-model-server';
import { useAppPage, startGoal } from '../../../support/app-page';
import { axeViolations } from '../../../support/axe';
import { overflowOf } from '../../../support/layout';

// A browser, a host and a run on a loaded 2-core machine running the whole suite: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });
const openApp = useAppPage();

const PLAN: PlanStepScript[] = [
  { id: 'gather', description: 'gather the open issues' },
  { id: 'sort', description: 'sort them by severity', dependencies: ['gather'] },
  { id: 'assign', description: 'suggest an owner for each', dependencies: ['gather'] },
  { id: 'report', description: 'write the triage report', dependencies: ['sort', 'assign'] },
];

const FITS = { scrollsSideways: false, outside: [] };

const graphWidth = (page: Page) => page.locator('.dag').evaluate((dag) => dag.getBoundingClientRect().width);
const toggle = (page: Page) => page.getByRole('button', { name: /^(Hide|Show) step details$/ });

async function expectInspector(page: Page, open: boolean): Promise<void> {
  await expect.poll(() => toggle(page).getAttribute('aria-expanded')).toBe(String(open));
  expect(await toggle(page).textContent()).toBe(open ? 'Hide step details' : 'Show step details');
  expect(await page.getByRole('complementary', { name: 'Step details' }).isVisible()).toBe(open);
}

describe('the Runs desk fits the window (Chromium through archon serve)', () => {
  it('at 1440×900 the step details show beside the graph; at 1024×700 they wait for a selected step, the toggle hides them, and nothing leaves the window', async () => {
    const { page } = await openApp((request) => (request.purpose === 'plan' ? planReply(PLAN) : { hang: true }), { viewport: { width: 1440, height: 900 } });
    await startGoal(page, 'Triage the open issues');
    await page.getByRole('dialog', { name: 'Approval: plan' }).getByRole('button', { name: 'Approve' }).click();
    await page.locator('[data-step-id="gather"][data-status="running"]').waitFor();

    await expectInspector(page, true);
    expect(await toggle(page).getAttribute('aria-controls')).toBe(await page.getByRole('complementary', { name: 'Step details' }).getAttribute('id'));
    expect(await overflowOf(page)).toEqual(FITS);
    expect(await axeViolations(page)).toEqual([]);

    await page.setViewportSize({ width: 1024, height: 700 });
    await expectInspector(page, false);
    await expect.poll(() => overflowOf(page)).toEqual(FITS);
    const collapsed = await graphWidth(page);
    expect(collapsed).toBeGreaterThanOrEqual(400);
    // The graph with its toolbar (zoom, fit, minimap) ends above the window's bottom edge.
    expect(await page.locator('.dag').evaluate((dag) => dag.getBoundingClientRect().bottom)).toBeLessThanOrEqual(700);

    const tabStop = page.locator('[data-step-id][tabindex="0"]');
    const stepId = await tabStop.getAttribute('data-step-id');
    await tabStop.focus();
    await page.keyboard.press('Enter');
    await expectInspector(page, true);
    await page.getByRole('region', { name: `Step ${stepId}`, exact: true }).waitFor();
    expect(await overflowOf(page)).toEqual(FITS);
    expect(await graphWidth(page)).toBeGreaterThanOrEqual(400);
    expect(await axeViolations(page)).toEqual([]);

    await toggle(page).click();
    await expectInspector(page, false);
    await expect.poll(() => graphWidth(page)).toBe(collapsed);
    expect(await overflowOf(page)).toEqual(FITS);
  });
});
