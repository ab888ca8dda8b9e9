import type { Page } from 'playwright-core';
import { describe, expect, it, vi } from 'vitest';
import { ArchonStore } from '../../../../src/core/store/archon-store';
import { planReply, requestText, stepIdOf, type ModelServerOptions, type RecordedRequest, type ScriptedReply } from '../../../kit/scripted-model-server';
import { useServe } from '../../../support/archon-process';
import { axeViolations } from '../../../support/axe';
import { useBrowser } from '../../../support/browser';
import { useModelServers } from '../../../support/model-servers';
import { useTempDirs } from '../../../support/temp-dir';

// A browser, a host and a run on a loaded 2-core machine running the whole suite: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });

const tempDir = useTempDirs();
const startServe = useServe();
const launchBrowser = useBrowser();
const startServer = useModelServers();

const PLAN = [
  { id: 'fetch', description: 'fetch the figures' },
  { id: 'sum', description: 'sum the figures', dependencies: ['fetch'] },
];
/** The same call again and again: the step ends `loop_detected`, and with no repairs and no re-plans allowed it escalates at once. */
const LOOP: ScriptedReply = { toolCalls: [{ name: 'calculator', arguments: { expression: '1+1' } }] };
const FIGURES: ScriptedReply = { content: 'the figures: 1, 2, 3' };

/** A plan of fetch → sum whose `fetch` answers as `fetch` says; a data dir whose settings send a failed step straight to the operator. */
async function openApp(fetch: (request: RecordedRequest) => ScriptedReply) {
  const reply: ModelServerOptions['reply'] = (request) => {
    if (request.purpose === 'plan') return planReply(PLAN);
    if (request.purpose === 'final') return { content: 'The total is 6.' };
    if (request.purpose === 'step') return stepIdOf(request) === 'fetch' ? fetch(request) : { content: 'total 6' };
    return { content: 'ok' };
  };
  const server = await startServer({ reply });
  const dataDir = tempDir();
  const store = ArchonStore.open(dataDir);
  try {
    store.updateSettings({ repairBudget: 0, maxReplans: 0 });
  } finally {
    store.close();
  }
  const serve = await startServe(dataDir, ['--model-url', server.url, '--workspace', tempDir()]);
  const context = await (await launchBrowser()).newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(60_000);
  await page.goto(serve.url.href);
  await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
  await page.getByLabel('Goal').fill('Sum the figures');
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  await approval(page, 'plan').getByRole('button', { name: 'Approve' }).click();
  const fetches = () => server.chatRequests.filter((request) => request.purpose === 'step' && stepIdOf(request) === 'fetch');
  const sums = () => server.chatRequests.filter((request) => request.purpose === 'step' && stepIdOf(request) === 'sum');
  return { page, fetches, sums, close: () => context.close() };
}

const approval = (page: Page, kind: string) => page.getByRole('dialog', { name: `Approval: ${kind}` });
const status = (page: Page, id: string) => page.locator(`[data-step-id="${id}"]`).getAttribute('data-status');

describe('the escalation dialog in Chromium through archon serve', () => {
  it('Retry runs the step again: it completes and its dependant runs; the dialog shows the evidence and offers only the escalation choices', async () => {
    let fixed = false;
    const app = await openApp(() => (fixed ? FIGURES : LOOP));
    const dialog = approval(app.page, 'escalation');
    await dialog.waitFor();
    const evidence = dialog.getByRole('definition');
    await evidence.filter({ hasText: 'fetch: fetch the figures' }).waitFor();
    const failures = dialog.getByRole('list', { name: 'Failed attempts' }).getByRole('listitem');
    await failures.getByText(/^fetch: /).first().waitFor();
    // Each failure once: the reason is not repeated by the summary, the packet or the failure list.
    const reason = (await failures.first().innerText()).replace(/^fetch: /, '').replace(/ ×\d+$/, '');
    const shown = await dialog.innerText();
    expect(shown.split(reason).length - 1).toBe(1);
    const listed = await failures.allInnerTexts();
    expect(new Set(listed).size).toBe(listed.length);
    expect(await dialog.getByRole('heading', { level: 2 }).innerText()).toBe('Step fetch is stuck: choose what happens');
    for (const name of ['Approve', 'Reject', 'Edit', 'Lock constraint']) expect(await dialog.getByRole('button', { name, exact: true }).count(), name).toBe(0);
    expect(await status(app.page, 'fetch')).toBe('failed');
    expect(app.sums()).toHaveLength(0);

    expect(await axeViolations(app.page)).toEqual([]);

    const before = app.fetches().length;
    fixed = true;
    await dialog.getByRole('button', { name: 'Retry' }).click();
    await approval(app.page, 'final answer').getByRole('button', { name: 'Approve' }).click();
    await app.page.getByLabel('Answer').filter({ hasText: 'The total is 6.' }).waitFor();
    expect(app.fetches()).toHaveLength(before + 1);
    expect(app.sums()).toHaveLength(1);
    expect(requestText(app.sums()[0] as RecordedRequest)).toContain('the figures: 1, 2, 3');
    expect([await status(app.page, 'fetch'), await status(app.page, 'sum')]).toEqual(['completed', 'completed']);
    await app.close();
  });

  it('Skip leaves the step out: it is not asked again and its dependant runs without its result', async () => {
    const app = await openApp(() => LOOP);
    const dialog = approval(app.page, 'escalation');
    await dialog.waitFor();
    const before = app.fetches().length;
    await dialog.getByRole('button', { name: 'Skip' }).click();
    await expect.poll(() => app.sums().length).toBe(1);
    await app.page.locator('[data-step-id="sum"][data-status="completed"]').waitFor();
    expect(await status(app.page, 'fetch')).toBe('skipped');
    expect(app.fetches()).toHaveLength(before);
    await app.close();
  });

  it('Edit step runs the step with the new description, verbatim', async () => {
    const app = await openApp((request) => (requestText(request).includes('from the mirror at mirror.example') ? FIGURES : LOOP));
    const dialog = approval(app.page, 'escalation');
    await dialog.getByRole('button', { name: 'Edit step' }).click();
    expect(await dialog.getByLabel('New description').inputValue()).toBe('fetch the figures');
    await dialog.getByLabel('New description').fill('fetch the figures from the mirror at mirror.example');
    await dialog.getByRole('button', { name: 'Run edited step' }).click();
    await approval(app.page, 'final answer').getByRole('button', { name: 'Approve' }).click();
    await app.page.getByLabel('Answer').filter({ hasText: 'The total is 6.' }).waitFor();
    expect(requestText(app.fetches().at(-1) as RecordedRequest)).toContain('fetch the figures from the mirror at mirror.example');
    expect([await status(app.page, 'fetch'), await status(app.page, 'sum')]).toEqual(['completed', 'completed']);
    await app.close();
  });
});
