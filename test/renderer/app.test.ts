import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { axeViolations } from '../support/axe';
import { planReply, requestText, startModelServer, stepIdOf, type ModelServerOptions, type RecordedRequest, type ScriptedModelServer } from '../kit/scripted-model-server';
import { ArchonStore } from '../../src/core/store/archon-store';
import { useServe } from '../support/archon-process';
import { useBrowser } from '../support/browser';
import { useTempDirs } from '../support/temp-dir';

// A browser, a host and a run on a loaded 2-core machine running the whole suite: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });
const tempDir = useTempDirs();
const startServe = useServe();
const launchBrowser = useBrowser();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function openApp(reply: ModelServerOptions['reply'], extra: string[] = []) {
  server = await startModelServer({ reply });
  const workspace = tempDir();
  const dataDir = tempDir();
  const serve = await startServe(dataDir, ['--model-url', server.url, '--workspace', workspace, ...extra]);
  const browser = await launchBrowser();
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  // These tests assert order and outcome; the waits are only long enough for a loaded 2-core machine running the whole suite.
  page.setDefaultTimeout(60_000);
  await page.goto(serve.url.href);
  await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
  return { page, workspace, dataDir, server };
}

async function startGoal(page: Page, goal: string) {
  await page.getByLabel('Goal').fill(goal);
  await page.getByRole('button', { name: 'Run', exact: true }).click();
}

const approval = (page: Page, kind: string) => page.getByRole('dialog', { name: `Approval: ${kind}` });

describe('the app in Chromium through archon serve', () => {
  it('runs a goal: approve the plan, the nodes complete, approve the final answer, the answer is shown', async () => {
    const { page } = await openApp((request) => {
      if (request.purpose === 'plan') return planReply([{ id: 'gather', description: 'gather facts' }, { id: 'answer', description: 'answer', dependencies: ['gather'] }]);
      if (request.purpose === 'final') return { content: 'The answer is 42.' };
      return { content: `done ${stepIdOf(request)}` };
    });
    await startGoal(page, 'What is the answer?');
    await approval(page, 'plan').getByRole('button', { name: 'Approve' }).click();
    await approval(page, 'final answer').waitFor();
    expect(await page.locator('[data-status="completed"]').count()).toBe(2);
    await approval(page, 'final answer').getByRole('button', { name: 'Approve' }).click();
    await page.getByLabel('Answer').filter({ hasText: 'The answer is 42.' }).waitFor();
    await page.getByRole('button', { name: /What is the answer\?.*completed/ }).waitFor();
    await page.close();
  });

  it('rejects a plan with feedback: the re-plan request carries it', async () => {
    const { page, server: model } = await openApp((request) => {
      if (request.purpose === 'plan') return planReply([{ id: 'only', description: 'one step' }]);
      if (request.purpose === 'final') return { content: 'fine' };
      return { content: 'ok' };
    });
    await startGoal(page, 'Plan something');
    const dialog = approval(page, 'plan');
    await dialog.getByRole('button', { name: 'Reject' }).click();
    await dialog.getByLabel('Feedback').fill('Use a smaller plan please');
    await dialog.getByRole('button', { name: 'Send rejection' }).click();
    await expect.poll(() => model.chatRequests.filter((request) => request.purpose === 'plan').length).toBe(2);
    expect(requestText(model.chatRequests.filter((request) => request.purpose === 'plan')[1] as RecordedRequest)).toContain('Use a smaller plan please');
    await approval(page, 'plan').getByRole('button', { name: 'Approve' }).click();
    await approval(page, 'final answer').getByRole('button', { name: 'Approve' }).click();
    await page.close();
  });

  it('edits a tool call: the edited arguments are the ones that run', async () => {
    const { page, workspace } = await openApp((request) => {
      if (request.purpose === 'plan') return planReply([{ id: 'write', description: 'write a note' }]);
      if (request.purpose === 'final') return { content: 'written' };
      return request.body.messages?.some((message) => message.role === 'tool') ? { content: 'done' } : { toolCalls: [{ name: 'write_file', arguments: { path: 'note.txt', content: 'from the model' } }] };
    });
    await startGoal(page, 'Write a note');
    await approval(page, 'plan').getByRole('button', { name: 'Approve' }).click();
    const dialog = approval(page, 'tool call');
    await dialog.getByRole('button', { name: 'Edit' }).click();
    await dialog.getByLabel('Arguments (JSON)').fill('{"path": "note.txt", "content": "from a person"}');
    await dialog.getByRole('button', { name: 'Approve edited call' }).click();
    await approval(page, 'final answer').getByRole('button', { name: 'Approve' }).click();
    await page.getByLabel('Answer').waitFor();
    expect(readFileSync(join(workspace, 'note.txt'), 'utf8')).toBe('from a person');
    await page.close();
  });

  it('locks a constraint from the dialog: the tool is gone from later requests', async () => {
    const { page, server: model } = await openApp((request) => {
      if (request.purpose === 'plan') return planReply([{ id: 'shell', description: 'use the shell' }]);
      if (request.purpose === 'final') return { content: 'done without a shell' };
      return request.body.messages?.some((message) => message.role === 'tool') ? { content: 'gave up on the shell' } : { toolCalls: [{ name: 'run_command', arguments: { command: 'ls' } }] };
    });
    await startGoal(page, 'Use the shell');
    await approval(page, 'plan').getByRole('button', { name: 'Approve' }).click();
    const dialog = approval(page, 'tool call');
    await dialog.getByRole('button', { name: 'Lock constraint' }).click();
    await dialog.getByLabel('Never use').selectOption('run_command');
    await dialog.getByRole('button', { name: 'Lock and refuse' }).click();
    await approval(page, 'final answer').getByRole('button', { name: 'Approve' }).click();
    await page.getByLabel('Answer').waitFor();
    const steps = model.chatRequests.filter((request) => request.purpose === 'step');
    expect(steps[0]?.body.tools?.map((tool) => tool.function.name)).toContain('run_command');
    expect(steps.at(-1)?.body.tools?.map((tool) => tool.function.name)).not.toContain('run_command');
    await page.close();
  });

  it('emergency stop: running nodes show stopped within 1 s, the banner offers Re-arm, Re-arm starts nothing; the Audit view reports it', async () => {
    const { page, server: model } = await openApp(
      (request) => (request.purpose === 'plan' ? planReply([{ id: 'a', description: 'think' }, { id: 'b', description: 'think more' }]) : { hang: true }),
      ['--policy', 'permissive'],
    );
    await startGoal(page, 'Think forever');
    await page.locator('[data-status="running"]').nth(1).waitFor();
    await page.getByRole('button', { name: 'Emergency stop' }).click();
    // How fast is measured by npm run bench; here, that both running nodes end stopped.
    await page.locator('[data-status="stopped"]').nth(1).waitFor();
    expect(await page.locator('[data-status="running"]').count()).toBe(0);
    const requests = model.requests.length;
    await page.getByRole('button', { name: 'Re-arm', exact: true }).click();
    await page.getByRole('button', { name: 'Re-arm', exact: true }).waitFor({ state: 'detached' });
    await page.waitForTimeout(500);
    expect(model.requests.length).toBe(requests);
    await page.getByRole('button', { name: 'Resume' }).first().waitFor();

    await page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: 'Audit' }).click();
    await page.getByLabel('Report on').selectOption({ label: 'Think forever (stopped)' });
    await page.getByRole('list', { name: 'Findings' }).getByText('Emergency stop (operator)').waitFor();
    await page.getByRole('button', { name: 'Verify log' }).click();
    await page.getByText(/The audit log is intact/).waitFor();
    await page.close();
  });
});

describe('authority stays with the operator', () => {
  it('refuses, from the page alone, the workspace / and a tool approval of "never": a clear message, nothing changed', async () => {
    const { page, dataDir, server: model } = await openApp(() => ({ content: 'unused' }));
    await page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: 'Settings' }).click();
    await page.getByLabel('run_command approval').selectOption('never');
    // Said in the app's words: where it is confirmed, and no command-line flag.
    const refused = page.getByRole('alert').filter({ hasText: /Not changed: approval of run_command from "default" to "never".*on the terminal that started this page's host/ });
    await refused.waitFor();
    expect(await refused.textContent()).not.toContain('--trust-ui');
    await page.getByRole('alert').getByRole('button', { name: 'Dismiss' }).click();
    expect(await page.getByLabel('run_command approval').inputValue()).toBe('default');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: 'Runs' }).click();
    await page.getByLabel('Workspace folder').fill('/');
    await startGoal(page, 'Tidy up the whole disk');
    await page.getByRole('alert').filter({ hasText: /Not changed: workspace \/ instead of/ }).waitFor();
    expect(model.chatRequests).toHaveLength(0);

    const store = ArchonStore.open(dataDir);
    try {
      expect(store.getSettings().toolApproval).toEqual({});
      expect(store.runs.listRuns(10)).toEqual([]);
    } finally {
      store.close();
    }
    await page.close();
  });
});

describe('API keys from the page', () => {
  it('sends a key typed in Settings to the server being tested, and keeps it off the page', async () => {
    const { page, server: model } = await openApp(() => ({ content: 'unused' }));
    await page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: 'Settings' }).click();
    // The host was started with --model-url: Settings show that server, the one runs use.
    expect(await page.getByLabel('Model server URL').inputValue()).toBe(model.url);
    await page.getByLabel('API key (kept for this server only)').fill('PAGEKEY-123456');
    await page.getByRole('button', { name: 'Test connection' }).click();
    await page.getByRole('status').filter({ hasText: 'Reached' }).waitFor();
    expect(model.requests.filter((request) => request.path === '/v1/models').map((request) => request.headers.authorization)).toEqual(['Bearer PAGEKEY-123456']);
    expect(await page.getByLabel('API key (kept for this server only)').inputValue()).toBe('');
    await page.close();
  });
});

describe('the DAG at scale', () => {
  it('renders a synthetic 500-node DAG and re-renders only the node whose status changed', async () => {
    server = undefined;
    const serve = await startServe(tempDir());
    const browser = await launchBrowser();
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`${serve.url.href}&perf-dag=500`);
    await expect.poll(() => page.locator('[data-step-id]').count(), { timeout: 10_000 }).toBe(500);
    const before = await page.evaluate(() => Object.fromEntries(window.archonPerf?.renderCounts ?? []));
    await page.evaluate(() => window.archonPerf?.setStatus('n250', 'running'));
    await page.locator('[data-step-id="n250"][data-status="running"]').waitFor();
    const after = await page.evaluate(() => Object.fromEntries(window.archonPerf?.renderCounts ?? []));
    const changed = Object.keys(after).filter((id) => after[id] !== before[id]);
    expect(changed).toEqual(['n250']);
    await page.close();
  });
});

describe('accessibility', () => {
  it('reaches every main control by keyboard and passes an automated contrast check on the main screens', async () => {
    const serve = await startServe(tempDir());
    const browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    await page.goto(serve.url.href);
    await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
    await page.getByLabel('Goal').fill('keyboard');
    const reached = new Set<string>();
    await page.locator('body').focus();
    for (let index = 0; index < 40; index++) {
      await page.keyboard.press('Tab');
      reached.add(await page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.textContent?.trim() ?? ''));
    }
    for (const control of ['Emergency stop', 'Runs', 'Audit', 'Settings', 'Run']) expect(reached, control).toContain(control);

    for (const screen of ['Runs', 'Audit', 'Memory', 'Settings']) {
      await page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: screen }).click();
      await page.getByRole('heading', { name: screen, exact: true, level: 1 }).waitFor();
      expect(await axeViolations(page), screen).toEqual([]);
    }
    await context.close();
  });
});
