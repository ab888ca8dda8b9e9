import { describe, expect, it, vi } from 'vitest';
import { planReply } from '../../../kit/scripted-model-server';
import { startGoal, useAppPage } from '../../../support/app-page';
import { axeViolations } from '../../../support/axe';

// A browser, a host and a run on a loaded 2-core machine: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });
const openApp = useAppPage();

describe('Stop run in the app', () => {
  it('stops the selected run alone: it ends stopped naming the operator, and the emergency stop stays armed', async () => {
    const { page } = await openApp((request) => (request.purpose === 'plan' ? planReply([{ id: 'think', description: 'think forever' }]) : { hang: true }));
    await startGoal(page, 'Think forever');
    await page.getByRole('dialog', { name: 'Approval: plan' }).getByRole('button', { name: 'Approve' }).click();
    await page.locator('[data-status="running"]').first().waitFor();
    expect(await axeViolations(page)).toEqual([]);

    await page.getByRole('button', { name: 'Stop run', exact: true }).click();
    await page.locator('[data-status="stopped"]').first().waitFor();
    await page.getByText(/Stopped by the operator \(Stop run in the app\)/).first().waitFor();
    await page.getByRole('button', { name: 'Stop run', exact: true }).waitFor({ state: 'detached' });
    expect(await page.getByRole('button', { name: 'Re-arm' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Run', exact: true }).isVisible()).toBe(true);
  });
});

describe('Pause run in the app', () => {
  it('pauses the selected run: it ends paused naming the operator, Resume is offered for it, and its stopped step says paused', async () => {
    const { page } = await openApp((request) => (request.purpose === 'plan' ? planReply([{ id: 'think', description: 'think forever' }]) : { hang: true }));
    await startGoal(page, 'Think forever');
    await page.getByRole('dialog', { name: 'Approval: plan' }).getByRole('button', { name: 'Approve' }).click();
    await page.locator('[data-status="running"]').first().waitFor();

    await page.getByRole('button', { name: 'Pause run', exact: true }).click();
    await page.locator('.run-header .status-paused').waitFor();
    await page.getByText(/Paused by the operator \(Pause run in the app\)\. Resume continues it/).first().waitFor();
    await page.getByRole('button', { name: 'Pause run', exact: true }).waitFor({ state: 'detached' });
    expect(await page.getByRole('button', { name: 'Resume', exact: true }).isVisible()).toBe(true);
    // The step it stopped waits for Resume: it says paused, not stopped, in words and to a screen reader.
    const step = page.locator('[data-step-id="think"][data-status="stopped"]');
    await step.getByText('paused', { exact: true }).waitFor();
    expect(await step.getAttribute('aria-label')).toBe('Step think, paused');
    await step.click();
    await page.getByRole('region', { name: 'Step think' }).locator('.status').filter({ hasText: /^paused$/ }).waitFor();
  });
});
