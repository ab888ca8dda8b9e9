import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Page } from 'playwright-core';
import { describe, expect, it, vi } from 'vitest';
import { axeViolations } from '../../../support/axe';
import { planReply } from '../../../kit/scripted-model-server';
import { useServe } from '../../../support/archon-process';
import { useBrowser } from '../../../support/browser';
import { useModelServers } from '../../../support/model-servers';
import { useTempDirs } from '../../../support/temp-dir';

// A browser, a host and an 8-way run on a loaded 2-core machine running the whole suite: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });

const tempDir = useTempDirs();
const startServe = useServe();
const launchBrowser = useBrowser();
const startServer = useModelServers();

const fanOut = Array.from({ length: 8 }, (_, index) => ({ id: `s${index + 1}`, description: `part ${index + 1}` }));

async function openApp(modelUrl: string, extra: string[]) {
  const dataDir = tempDir();
  const serve = await startServe(dataDir, ['--model-url', modelUrl, '--workspace', tempDir(), '--policy', 'permissive', ...extra]);
  const context = await (await launchBrowser()).newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(60_000);
  await page.goto(serve.url.href);
  await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
  return { page, dataDir, close: () => context.close() };
}

async function startGoal(page: Page, goal: string) {
  await page.getByLabel('Goal').fill(goal);
  await page.getByRole('button', { name: 'Run', exact: true }).click();
}

const approval = (page: Page, kind: string) => page.getByRole('dialog', { name: `Approval: ${kind}` });

describe('honest budgets, in Chromium through archon serve', () => {
  it('an 8-way fan-out hitting a 1,500-token cap raises one request; approving "Raise to 3,000 tokens" sets exactly 3,000, shown in the meter', async () => {
    const model = await startServer({
      reply: (request) => {
        if (request.purpose === 'plan') return { ...planReply(fanOut), usage: { prompt_tokens: 80, completion_tokens: 20 } };
        if (request.purpose === 'final') return { content: 'all parts done', usage: { prompt_tokens: 100, completion_tokens: 10 } };
        return { content: 'done', usage: { prompt_tokens: 120, completion_tokens: 30 } };
      },
    });
    const { page, dataDir, close } = await openApp(model.url, ['--max-tokens', '1500', '--concurrency', '8']);
    await startGoal(page, 'eight parts');
    const raise = approval(page, 'budget raise');
    await raise.waitFor();
    const budget = page.getByRole('region', { name: 'Budget' });
    await budget.getByText('/ 1,500').waitFor();
    expect(await raise.getByText('Nothing else waiting').count()).toBe(1);
    expect(await axeViolations(page)).toEqual([]);
    await raise.getByRole('button', { name: 'Raise to 3,000 tokens' }).click();
    await approval(page, 'final answer').waitFor();
    await budget.getByText('/ 3,000').waitFor();
    await approval(page, 'final answer').getByRole('button', { name: 'Approve' }).click();
    await page.getByLabel('Answer').filter({ hasText: 'all parts done' }).waitFor();
    const db = new Database(join(dataDir, 'archon.db'), { readonly: true });
    const raises = db.prepare("SELECT status, decision_json FROM approvals WHERE kind = 'budget_raise'").all();
    db.close();
    expect(raises).toEqual([{ status: 'approved', decision_json: expect.stringContaining('approve') }]);
    expect(await budget.getByText('/ 3,000').count()).toBe(1);
    await close();
  });

  it('a model nobody priced shows "price unknown"; Settings take a price per model, axe-clean', async () => {
    const model = await startServer({ reply: (request) => ({ ...(request.purpose === 'plan' ? planReply([{ id: 'a', description: 'answer' }]) : { content: 'done' }), usage: { prompt_tokens: 1000, completion_tokens: 1000 } }), models: ['mystery-model'] });
    // Through an address Archon does not count as this machine: the model is not free.
    const { page, close } = await openApp(model.url.replace('127.0.0.1', '[::ffff:127.0.0.1]'), ['--trust-ui']);
    await startGoal(page, 'unpriced');
    await approval(page, 'final answer').waitFor();
    const budget = page.getByRole('region', { name: 'Budget' });
    const cost = budget.locator('.meter').filter({ hasText: /^Cost/ });
    await cost.getByText('price unknown').waitFor();
    expect(await cost.textContent()).not.toContain('$');
    await approval(page, 'final answer').getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('list', { name: 'Run history' }).getByRole('listitem').filter({ has: page.getByRole('button', { name: 'unpriced completed' }) }).filter({ hasText: 'price unknown' }).waitFor();

    await page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: 'Settings' }).click();
    const prices = page.getByRole('group', { name: 'Model prices' });
    await prices.getByLabel('Priced model').fill('mystery-model');
    await prices.getByLabel('Input, USD per million tokens').fill('2');
    await prices.getByLabel('Output, USD per million tokens').fill('10');
    await prices.getByRole('button', { name: 'Save price' }).click();
    await prices.getByRole('cell', { name: 'mystery-model', exact: true }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await close();
  });
});
