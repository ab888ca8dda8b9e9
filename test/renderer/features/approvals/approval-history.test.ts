import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { planReply } from '../../../kit/scripted-model-server';
import { useServe } from '../../../support/archon-process';
import { useBrowser } from '../../../support/browser';
import { useModelServers } from '../../../support/model-servers';
import { useTempDirs } from '../../../support/temp-dir';

// A browser, a host and a run on a loaded 2-core machine running the whole suite: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });

const tempDir = useTempDirs();
const startServe = useServe();
const launchBrowser = useBrowser();
const startServer = useModelServers();

describe("a run's approval history, in Chromium through archon serve", () => {
  it('lists each request with its answer and who decided it: the operator, in the browser page', async () => {
    const server = await startServer({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'think', description: 'think it over' }]) : { content: 'Thought it over.' }) });
    const dataDir = tempDir();
    const serve = await startServe(dataDir, ['--model-url', server.url, '--workspace', tempDir(), '--policy', 'balanced']);
    const context = await (await launchBrowser()).newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(60_000);
    await page.goto(serve.url.href);
    await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();

    await page.getByLabel('Goal').fill('Think it over');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByRole('dialog', { name: 'Approval: plan' }).getByRole('button', { name: 'Approve', exact: true }).click();
    await page.getByRole('dialog', { name: 'Approval: final answer' }).getByRole('button', { name: 'Approve', exact: true }).click();
    await page.getByLabel('Answer').filter({ hasText: 'Thought it over.' }).waitFor();

    await page.getByRole('tablist', { name: 'Run views' }).getByRole('tab', { name: 'Approvals' }).click();
    const history = page.getByRole('list', { name: 'Approval history' }).getByRole('listitem');
    await expect.poll(() => history.allInnerTexts()).toEqual([expect.stringMatching(/^plan .* — approved \(decided by the operator, in the browser page\)$/), expect.stringMatching(/^final answer .* — approved \(decided by the operator, in the browser page\)$/)]);
    await context.close();

    const db = new Database(join(dataDir, 'archon.db'), { readonly: true });
    expect(db.prepare('SELECT kind, decided_by, decided_channel FROM approvals ORDER BY rowid').all()).toEqual([
      { kind: 'plan', decided_by: 'operator', decided_channel: 'page' },
      { kind: 'final_answer', decided_by: 'operator', decided_channel: 'page' },
    ]);
    db.close();
  });
});
