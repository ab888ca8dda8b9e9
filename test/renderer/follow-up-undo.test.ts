import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Page } from 'playwright-core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { planReply, requestText, startModelServer, type ScriptedModelServer } from '../kit/scripted-model-server';
import { useServe } from '../support/archon-process';
import { axeViolations } from '../support/axe';
import { useBrowser } from '../support/browser';
import { useTempDirs } from '../support/temp-dir';

// A browser, a host and two runs on a loaded 2-core machine: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });
const tempDir = useTempDirs();
const startServe = useServe();
const launchBrowser = useBrowser();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const EARLIER_ANSWER = 'I rewrote notes.txt with the new notes.';

async function approveFinalAnswer(page: Page, answer: string) {
  await page.getByRole('dialog', { name: 'Approval: final answer' }).getByRole('button', { name: 'Approve' }).click();
  await page.getByLabel('Answer').filter({ hasText: answer }).waitFor();
}

describe('a finished run in the app: Continue and Undo file changes', () => {
  it('Continue starts a follow-up that carries the earlier answer; Undo shows the diff, says up front which changed file it leaves, asks, and restores the rest', async () => {
    const model = await startModelServer({
      reply: (request) => {
        const followUp = requestText(request).includes('Earlier run');
        if (request.purpose === 'plan') return followUp ? planReply([{ id: 'sum', description: 'summarise' }]) : planReply([
              { id: 'w', description: 'rewrite the notes', tool: 'write_file', args: { path: 'notes.txt', content: 'the new notes\n' } },
              { id: 'm', description: 'rewrite the summary', tool: 'write_file', args: { path: 'NOTES.md', content: 'the new summary\n' }, dependencies: ['w'] },
            ]);
        if (request.purpose === 'final') return { content: requestText(request).includes('summarise what you did') ? 'Summary: new notes.' : EARLIER_ANSWER };
        return { content: 'done' };
      },
    });
    server = model;
    const workspace = tempDir();
    const dataDir = tempDir();
    writeFileSync(join(workspace, 'notes.txt'), 'the original notes\n');
    writeFileSync(join(workspace, 'NOTES.md'), 'the original summary\n');
    const serve = await startServe(dataDir, ['--model-url', model.url, '--workspace', workspace, '--policy', 'permissive']);
    const browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(60_000);
    await page.goto(serve.url.href);
    await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();

    await page.getByLabel('Goal').fill('rewrite the notes');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await approveFinalAnswer(page, EARLIER_ANSWER);
    expect(readFileSync(join(workspace, 'notes.txt'), 'utf8')).toBe('the new notes\n');

    await page.getByRole('button', { name: 'Continue run rewrite the notes' }).click();
    await page.getByRole('status').filter({ hasText: 'Continuing run' }).waitFor();
    await page.getByLabel('Goal').fill('summarise what you did');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await approveFinalAnswer(page, 'Summary: new notes.');
    const plans = model.chatRequests.filter((request) => request.purpose === 'plan').map(requestText);
    expect(plans).toHaveLength(2);
    expect(plans[1]).toContain(EARLIER_ANSWER);
    expect(plans[1]).toContain('Goal: rewrite the notes');
    const db = new Database(join(dataDir, 'archon.db'), { readonly: true });
    const rows = db.prepare("SELECT id, goal, follow_up_of FROM runs WHERE kind = 'goal' ORDER BY created_at").all() as { id: string; goal: string; follow_up_of: string | null }[];
    db.close();
    expect(rows.map((row) => [row.goal, row.follow_up_of])).toEqual([
      ['rewrite the notes', null],
      ['summarise what you did', rows[0]?.id],
    ]);
    // The follow-up names the run it continues, in its card and its header, and opens it.
    const continues = { name: 'Open the run it continues: rewrite the notes' };
    await page.getByRole('list', { name: 'Run history' }).getByRole('button', continues).waitFor();
    await page.locator('.run-header').getByRole('button', continues).click();
    await page.locator('.run-header h2').filter({ hasText: 'rewrite the notes' }).waitFor();

    // Changed by hand after the run: undo leaves it, and says so before Revert.
    writeFileSync(join(workspace, 'NOTES.md'), 'the summary, edited by hand\n');
    const undo = page.getByRole('button', { name: 'Undo file changes of run rewrite the notes' });
    await undo.click();
    const dialog = page.getByRole('dialog', { name: 'Undo file changes' });
    await dialog.getByText('Restore notes.txt').waitFor();
    await dialog.getByText('NOTES.md was changed since (by a later run or by hand): it will be left as it is').waitFor();
    expect(await dialog.getByText('Restore NOTES.md').count()).toBe(0);
    await expect.poll(() => dialog.locator('pre').textContent()).toContain('+the original notes');
    expect(await dialog.locator('pre .diff-added').textContent()).toBe('+the original notes\n');
    expect(await dialog.locator('pre .diff-removed').textContent()).toBe('-the new notes\n');
    expect(readFileSync(join(workspace, 'notes.txt'), 'utf8')).toBe('the new notes\n');
    expect(await axeViolations(page)).toEqual([]);
    await page.emulateMedia({ colorScheme: 'dark' });
    await expect.poll(() => page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    expect(await axeViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Revert' }).click();
    await dialog.getByRole('status').filter({ hasText: 'Reverted: notes.txt' }).waitFor();
    expect(readFileSync(join(workspace, 'notes.txt'), 'utf8')).toBe('the original notes\n');
    expect(readFileSync(join(workspace, 'NOTES.md'), 'utf8')).toBe('the summary, edited by hand\n');
    await dialog.getByRole('button', { name: 'Close' }).click();
    expect(await undo.evaluate((button) => button === document.activeElement)).toBe(true);

    // What is left can only be left as it is: nothing to revert, so no Revert.
    await undo.click();
    await dialog.getByText('NOTES.md was changed since (by a later run or by hand): it will be left as it is').waitFor();
    expect(await dialog.getByRole('button', { name: 'Revert' }).count()).toBe(0);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await context.close();
  });
});
