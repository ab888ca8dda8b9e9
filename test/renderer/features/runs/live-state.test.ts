import type { Page } from 'playwright-core';
import { describe, expect, it, vi } from 'vitest';
import { planReply } from '../../../kit/scripted-model-server';
import { startGoal, useAppPage } from '../../../support/app-page';
import { axeViolations } from '../../../support/axe';

// A browser, a host and a run of twelve seconds on a loaded 2-core machine: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });
const openApp = useAppPage();

/** A chain of steps, each waiting for its model reply until the test lets one through: the run goes as long as the test says. */
const CHAIN = Array.from({ length: 14 }, (_, index) => ({ id: `s${index + 1}`, description: `part ${index + 1}`, dependencies: index > 0 ? [`s${index}`] : [] }));

/** The selected run's card and its header, read at one moment: the card's figures, the header's status, tokens and time. */
function sample(page: Page) {
  return page.evaluate(() => {
    const meter = (label: string) => {
      const found = [...document.querySelectorAll('.budget .meter')].find((element) => element.firstElementChild?.textContent === label);
      return found?.lastElementChild?.textContent?.split(' / ')[0] ?? null;
    };
    const card = document.querySelector('.run-list li.selected');
    return {
      card: card?.querySelector('.run-info .run-meta')?.textContent ?? null,
      cardStatus: card?.querySelector('.status')?.textContent ?? null,
      headerStatus: document.querySelector('.run-header .status')?.textContent ?? null,
      tokens: meter('Tokens'),
      time: meter('Time'),
    };
  });
}

describe('one live state for the run list, the run header and the budget', () => {
  it('the selected card says what the header says each second of a run; pause, resume and stop show at once, in order', async () => {
    const waiting: (() => void)[] = [];
    const { page } = await openApp(async (request) => {
      if (request.purpose === 'plan') return planReply(CHAIN);
      if (request.purpose !== 'step') return { content: 'done' };
      await new Promise<void>((resolve) => waiting.push(resolve));
      return { content: 'done', usage: { prompt_tokens: 300, completion_tokens: 40 } };
    });
    const card = page.getByRole('list', { name: 'Run history' }).getByRole('listitem').filter({ has: page.getByRole('button', { name: /^Count the parts/ }) });
    await startGoal(page, 'Count the parts');
    const plan = page.getByRole('dialog', { name: 'Approval: plan' });
    await plan.waitFor();
    // The plan waits for the operator: the card says so, not "planning".
    await card.locator('.status').filter({ hasText: 'awaiting approval' }).waitFor();
    await plan.getByRole('button', { name: 'Approve' }).click();
    await page.locator('.run-header .status').filter({ hasText: /^running$/ }).waitFor();

    const samples = [];
    for (let second = 0; second < 10; second += 1) {
      waiting.shift()?.();
      await page.waitForTimeout(1000);
      samples.push(await sample(page));
    }
    for (const { card: figures, tokens, time, cardStatus, headerStatus } of samples) {
      expect(figures).toMatch(new RegExp(`^${time} · ${tokens} tok · `));
      expect([cardStatus, headerStatus]).toEqual(['running', 'running']);
    }
    // The figures moved while they were compared: the run was spending and its clock ticking.
    const parse = (text: string | null) => Number((text ?? '').replace(/[^0-9]/g, ''));
    expect(parse(samples.at(-1)?.tokens ?? null)).toBeGreaterThan(parse(samples[0]?.tokens ?? null));
    expect(parse(samples.at(-1)?.time ?? null)).toBeGreaterThanOrEqual(parse(samples[0]?.time ?? null) + 8);
    // A card that goes offers Pause and Stop, never Delete.
    expect(await card.getByRole('button', { name: 'Delete run Count the parts' }).count()).toBe(0);
    expect(await card.getByRole('button', { name: 'Stop run Count the parts' }).count()).toBe(1);

    await page.getByRole('button', { name: 'Pause run', exact: true }).click();
    await card.locator('.status-paused').waitFor();
    await card.getByRole('button', { name: 'Resume', exact: true }).click();
    await card.locator('.status').filter({ hasText: /^running$/ }).waitFor();
    expect((await sample(page)).headerStatus).toBe('running');

    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { seen: string[] }).seen = seen;
      const note = () => {
        const text = document.querySelector('.run-header .status')?.textContent ?? '';
        if (seen.at(-1) !== text) seen.push(text);
      };
      new MutationObserver(note).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await page.getByRole('button', { name: 'Stop run', exact: true }).click();
    await page.locator('.run-header .status-stopped').waitFor();
    const seen = await page.evaluate(() => (window as unknown as { seen: string[] }).seen);
    expect(seen.indexOf('stopping…')).toBeGreaterThanOrEqual(0);
    expect(seen.indexOf('stopping…')).toBeLessThan(seen.indexOf('stopped'));
    expect(await card.locator('.status').textContent()).toBe('stopped');
    expect(await axeViolations(page)).toEqual([]);

    // Delete asks first; Cancel leaves the run where it was.
    await card.getByRole('button', { name: 'Delete run Count the parts' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete run?' });
    expect(await confirm.getByRole('button', { name: 'Cancel' }).evaluate((button) => button === document.activeElement)).toBe(true);
    await page.keyboard.press('Escape');
    await confirm.waitFor({ state: 'hidden' });
    expect(await card.count()).toBe(1);
    await card.getByRole('button', { name: 'Delete run Count the parts' }).click();
    await confirm.getByRole('button', { name: 'Delete run', exact: true }).click();
    await card.waitFor({ state: 'detached' });
  });

  it('a skip link, first in the Runs view, takes the keyboard past the composer and the history to the selected run', async () => {
    const { page } = await openApp((request) => (request.purpose === 'plan' ? planReply([{ id: 'think', description: 'think' }]) : { hang: true }));
    await startGoal(page, 'Think');
    await page.getByRole('dialog', { name: 'Approval: plan' }).getByRole('button', { name: 'Approve' }).click();
    await page.locator('[data-status="running"]').first().waitFor();
    const skip = page.getByRole('link', { name: 'Skip to selected run' });
    await skip.focus();
    expect(await skip.isVisible()).toBe(true);
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Selected run');
    // From the selected run, the header's controls come next, before any card of the history.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Pause run');
  });
});
