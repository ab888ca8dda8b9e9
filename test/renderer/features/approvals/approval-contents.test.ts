import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it, vi } from 'vitest';
import { planReply, requestText, type ModelServerOptions, type RecordedRequest, type ScriptedReply } from '../../../kit/scripted-model-server';
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

const approval = (page: Page, kind: string) => page.getByRole('dialog', { name: `Approval: ${kind}` });
const title = (dialog: Locator) => dialog.getByRole('heading', { level: 2 }).innerText();
const toolTurn = (request: RecordedRequest) => request.body.messages?.filter((message) => message.role === 'tool').length ?? 0;

async function openApp(reply: ModelServerOptions['reply'], prepare: (workspace: string) => void = () => undefined, viewport = { width: 1400, height: 900 }) {
  const server = await startServer({ reply });
  const workspace = tempDir();
  prepare(workspace);
  const serve = await startServe(tempDir(), ['--model-url', server.url, '--workspace', workspace]);
  const context = await (await launchBrowser()).newContext({ viewport });
  const page = await context.newPage();
  page.setDefaultTimeout(60_000);
  await page.goto(serve.url.href);
  await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
  return { page, server, workspace, close: () => context.close() };
}

async function startGoal(page: Page, goal: string) {
  await page.getByLabel('Goal').fill(goal);
  await page.getByRole('button', { name: 'Run', exact: true }).click();
}

const CALLS: ScriptedReply[] = [
  { toolCalls: [{ name: 'write_file', arguments: { path: 'note.txt', content: 'new line\nkeep\n' } }] },
  { toolCalls: [{ name: 'write_file', arguments: { path: 'fresh.txt', content: 'hello' } }] },
  { toolCalls: [{ name: 'write_file', arguments: { path: 'fresh2.txt', content: 'again' } }] },
  { toolCalls: [{ name: 'run_command', arguments: { command: 'rm -rf build' } }] },
  { content: 'done' },
];

describe('what an approval shows, in Chromium through archon serve', () => {
  it('a plan as a list and a graph; a write over a file as its diff; a new file as such; a command with its dangerous parts; "approve all like this" covers the later writes; Lock only where a tool is involved', async () => {
    const app = await openApp(
      (request) => {
        if (request.purpose === 'plan') return planReply([{ id: 'write', description: 'write the notes' }]);
        if (request.purpose === 'final') return { content: 'All written.' };
        return CALLS[Math.min(toolTurn(request), CALLS.length - 1)] as ScriptedReply;
      },
      (workspace) => writeFileSync(join(workspace, 'note.txt'), 'old line\nkeep\n'),
    );
    await startGoal(app.page, 'Write the notes');
    const plan = approval(app.page, 'plan');
    await plan.getByRole('list', { name: 'Plan steps' }).getByText('write the notes').waitFor();
    expect(await title(plan)).toBe('Approve the plan (1 step)');
    await plan.getByRole('img', { name: 'Plan graph: 1 step(s)' }).waitFor();
    expect(await plan.getByRole('button', { name: 'Lock constraint' }).count()).toBe(0);
    await plan.getByRole('button', { name: 'Approve', exact: true }).click();

    const overwrite = approval(app.page, 'tool call');
    const changes = overwrite.getByRole('list', { name: 'Changes to note.txt' });
    await changes.waitFor();
    expect(await changes.getByRole('listitem').allTextContents()).toEqual(['@@ -1,2 +1,2 @@', 'removed: -old line', 'added: +new line', ' keep']);
    await overwrite.getByText('Can be undone: the previous content is kept.').waitFor();
    expect(await title(overwrite)).toBe('Write note.txt');
    // The human form leads; the raw call is folded below it.
    const raw = overwrite.locator('details').filter({ has: app.page.getByText('The exact action', { exact: true }) });
    expect(await raw.evaluate((element) => (element as HTMLDetailsElement).open)).toBe(false);
    expect(await overwrite.evaluate((element) => [...element.querySelectorAll('.call-preview, .exact-action')].map((node) => node.className))).toEqual(['call-preview', 'exact-action']);
    await overwrite.getByRole('button', { name: 'Lock constraint' }).waitFor();
    // "Approve" names one button only: the contract outside tests rely on.
    expect(await overwrite.getByRole('button', { name: 'Approve' }).count()).toBe(1);
    expect(await axeViolations(app.page)).toEqual([]);
    await overwrite.getByRole('button', { name: 'Approve', exact: true }).click();

    const create = approval(app.page, 'tool call').filter({ hasText: 'fresh.txt' });
    await create.getByText('Creates a new file fresh.txt (5 bytes).').waitFor();
    await create.getByText('Can be undone: undo removes the new file.').waitFor();
    expect(await create.getByText('the previous content is kept').count()).toBe(0);
    await create.getByRole('button', { name: 'Allow all like this for this run' }).click();

    const command = approval(app.page, 'tool call').filter({ hasText: 'rm -rf build' });
    await command.getByText(`Runs in ${app.workspace}`).waitFor();
    expect(await title(command)).toBe('Run rm -rf build');
    expect(await command.getByRole('list', { name: 'Dangerous parts' }).getByRole('listitem').allInnerTexts()).toEqual(['deletes files: rm -rf build']);
    expect(existsSync(join(app.workspace, 'fresh2.txt'))).toBe(true);
    expect(await axeViolations(app.page)).toEqual([]);
    await command.getByRole('button', { name: 'Reject' }).click();
    await command.getByLabel('Feedback').fill('Keep the build folder.');
    await command.getByRole('button', { name: 'Send rejection' }).click();

    const final = approval(app.page, 'final answer');
    await final.waitFor();
    for (const name of ['Lock constraint', 'Edit', 'Allow all like this for this run']) expect(await final.getByRole('button', { name, exact: true }).count(), name).toBe(0);
    await final.getByRole('button', { name: 'Approve', exact: true }).click();
    await app.page.getByLabel('Answer').filter({ hasText: 'All written.' }).waitFor();
    expect(readFileSync(join(app.workspace, 'note.txt'), 'utf8')).toBe('new line\nkeep\n');
    await app.close();
  });

  it('edits a plan by deleting a step, adding one and moving it up: the run carries out the edited plan', async () => {
    const app = await openApp((request) => {
      if (request.purpose === 'plan') return planReply([{ id: 'keep', description: 'keep this step' }, { id: 'drop', description: 'drop this step' }]);
      if (request.purpose === 'final') return { content: 'Edited plan done.' };
      return { content: 'ok' };
    });
    await startGoal(app.page, 'Edit the plan');
    const plan = approval(app.page, 'plan');
    await plan.getByRole('button', { name: 'Edit' }).click();
    await plan.getByRole('button', { name: 'Delete step drop' }).click();
    await plan.getByRole('button', { name: 'Add step' }).click();
    await plan.getByRole('status').filter({ hasText: /step-2/ }).waitFor();
    await plan.getByLabel('Step 2 id').fill('added');
    await plan.getByLabel('Step 2 description').fill('write the added summary');
    await plan.getByRole('button', { name: 'Move step added up' }).click();
    expect(await plan.getByLabel('Step 1 id').inputValue()).toBe('added');
    await plan.getByText('The plan is a valid graph.').waitFor();
    expect(await axeViolations(app.page)).toEqual([]);
    await plan.getByRole('button', { name: 'Approve edited plan' }).click();
    await approval(app.page, 'final answer').getByRole('button', { name: 'Approve', exact: true }).click();
    await app.page.getByLabel('Answer').filter({ hasText: 'Edited plan done.' }).waitFor();
    const steps = app.server.chatRequests.filter((request) => request.purpose === 'step').map(requestText);
    expect(steps.some((text) => text.includes('write the added summary'))).toBe(true);
    expect(steps.some((text) => text.includes('drop this step'))).toBe(false);
    await app.close();
  });

  it('names at most the first 10 later steps of a call and counts the rest: "12 later steps: s1, …, s10, … and 2 more"', async () => {
    const chain = Array.from({ length: 13 }, (_, index) => ({ id: `s${index}`, description: `part ${index}`, dependencies: index === 0 ? [] : [`s${index - 1}`] }));
    const app = await openApp((request) => {
      if (request.purpose === 'plan') return planReply(chain);
      if (request.purpose === 'final') return { content: 'Chain done.' };
      const first = requestText(request).includes('Step s0:') && toolTurn(request) === 0;
      return first ? { toolCalls: [{ name: 'write_file', arguments: { path: 'chain.txt', content: 'start' } }] } : { content: 'ok' };
    });
    await startGoal(app.page, 'Run the chain');
    await approval(app.page, 'plan').getByRole('button', { name: 'Approve', exact: true }).click();
    const call = approval(app.page, 'tool call');
    const later = Array.from({ length: 10 }, (_, index) => `s${index + 1}`).join(', ');
    await call.getByText(`12 later steps: ${later}, … and 2 more`).waitFor();
    await call.getByRole('button', { name: 'Approve', exact: true }).click();
    await approval(app.page, 'final answer').getByRole('button', { name: 'Approve', exact: true }).click();
    await app.page.getByLabel('Answer').filter({ hasText: 'Chain done.' }).waitFor();
    await app.close();
  });

  it('at 1024×700 the Approve button is in view without scrolling; focus starts on the heading and goes back where it was; a plan made again after a rejection is headed "Revised plan" with what changed', async () => {
    let focused = () => undefined as void;
    const ready = new Promise<void>((resolve) => (focused = resolve));
    const first = ['gather', 'sort', 'count', 'chart', 'print'].map((id, index) => ({ id, description: `${id} the figures`, dependencies: index === 0 ? [] : ['gather'] }));
    const second = [...first.slice(0, 4), { id: 'report', description: 'report the figures', dependencies: ['gather'] }];
    let plans = 0;
    const app = await openApp(
      async (request) => {
        if (request.purpose === 'step') return { hang: true };
        if (request.purpose !== 'plan') return { content: 'ok' };
        await ready;
        return planReply(plans++ === 0 ? first : second);
      },
      undefined,
      { width: 1024, height: 700 },
    );
    await startGoal(app.page, 'Tally the figures');
    const goal = app.page.getByLabel('Goal');
    await goal.focus();
    focused();
    const isFocused = (locator: Locator) => locator.evaluate((element) => element === document.activeElement);

    const plan = approval(app.page, 'plan');
    await plan.getByRole('list', { name: 'Plan steps' }).waitFor();
    expect(await title(plan)).toBe('Approve the plan (5 steps)');
    await expect.poll(() => isFocused(plan.getByRole('heading', { level: 2 }))).toBe(true);
    const approve = plan.getByRole('button', { name: 'Approve', exact: true });
    const box = await approve.boundingBox();
    expect((box?.y ?? Infinity) + (box?.height ?? 0)).toBeLessThanOrEqual(700);
    expect(await app.page.evaluate(() => [window.scrollY, document.scrollingElement?.scrollTop ?? 0])).toEqual([0, 0]);
    expect(await axeViolations(app.page)).toEqual([]);

    await plan.getByRole('button', { name: 'Reject' }).click();
    await plan.getByLabel('Feedback').fill('Report the figures instead of printing them.');
    await plan.getByRole('button', { name: 'Send rejection' }).click();
    await plan.getByRole('heading', { name: 'Revised plan (5 steps)' }).waitFor();
    const changes = plan.getByRole('region', { name: 'What changed' });
    expect(await changes.getByRole('definition').allInnerTexts()).toEqual(['report', 'print']);
    const box2 = await plan.getByRole('button', { name: 'Approve', exact: true }).boundingBox();
    expect((box2?.y ?? Infinity) + (box2?.height ?? 0)).toBeLessThanOrEqual(700);
    await plan.getByRole('button', { name: 'Approve', exact: true }).click();
    await plan.waitFor({ state: 'detached' });
    await expect.poll(() => isFocused(goal)).toBe(true);
    await app.close();
  });

  it('a sub-agent’s plan says whose it is: the parent’s goal and the step that started it, its steps as a list', async () => {
    const subGoal = 'Find the capital of France';
    const app = await openApp((request) => {
      if (request.purpose !== 'plan') return { hang: true };
      const child = new RegExp(`^Goal: ${subGoal}$`, 'm').test(requestText(request));
      return child ? planReply([{ id: 'lookup', description: 'look the capital up' }]) : planReply([{ id: 'research', kind: 'subagent', goal: subGoal }]);
    });
    await startGoal(app.page, 'Report on France');
    await approval(app.page, 'plan').getByRole('button', { name: 'Approve', exact: true }).click();
    const child = approval(app.page, 'plan').filter({ hasText: 'look the capital up' });
    await child.getByText('Sub-agent of “Report on France” — step research').waitFor();
    expect(await child.getByRole('list', { name: 'Plan steps' }).getByRole('listitem').allInnerTexts()).toEqual([expect.stringMatching(/^lookup: look the capital up/)]);
    await app.close();
  });
});
