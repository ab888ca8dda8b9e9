import type { Page } from 'playwright-core';
import { describe, expect, it, vi } from 'vitest';
import { Auditor } from '../../../../src/auditor/auditor';
import { ArchonStore } from '../../../../src/core/store/archon-store';
import { RunOptionsSchema } from '../../../../src/shared/schemas/run';
import { planReply, requestText, stepIdOf, type RecordedRequest, type ScriptedReply } from '../../../kit/scripted-model-server';
import { startGoal, useAppPage } from '../../../support/app-page';
import { axeViolations } from '../../../support/axe';
import { useServe } from '../../../support/archon-process';
import { useBrowser } from '../../../support/browser';
import { useTempDirs } from '../../../support/temp-dir';
import { CHILD, CHILD_PLAN, CHILD_STATUSES, childEvents, PARENT, PARENT_PLAN, parentEvents } from './subagent-run';

// A browser and a host on a loaded 2-core machine running the whole suite: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });

const tempDir = useTempDirs();
const startServe = useServe();
const launchBrowser = useBrowser();
const openApp = useAppPage();

/** A data dir holding the finished parent run and its sub-agent's run, recorded through the store as the engine records them, and audited. */
function recordedRuns(): string {
  const dataDir = tempDir();
  const auditor = Auditor.start(dataDir);
  const store = ArchonStore.open(dataDir);
  try {
    const runs = store.runs;
    const now = new Date().toISOString();
    const options = (extra: object) => RunOptionsSchema.parse({ modelUrl: 'http://127.0.0.1:1/v1', model: '', policy: 'balanced', concurrency: null, maxTokens: null, maxCostUsd: null, workspace: dataDir, maxIterations: 10, ...extra });
    runs.createRun({ id: PARENT.id, goal: PARENT.goal, policy: 'balanced', options: options({}), now });
    runs.createRun({ id: CHILD.id, goal: CHILD.goal, policy: 'balanced', options: options({ parentRunId: PARENT.id, parentStepId: 'research', depth: 1 }), now });
    runs.savePlan(PARENT.id, PARENT_PLAN);
    runs.savePlan(CHILD.id, CHILD_PLAN);
    for (const step of PARENT_PLAN) runs.setStepStatus(PARENT.id, step.id, 'completed', now, { result: 'done' });
    for (const [stepId, status] of Object.entries(CHILD_STATUSES)) runs.setStepStatus(CHILD.id, stepId, status, now, status === 'completed' ? { result: 'done' } : { error: 'source B was already in the notes' });
    runs.setRunStatus(CHILD.id, 'completed', now, { answer: 'A says yes, B says no' });
    runs.setRunStatus(PARENT.id, 'completed', now, { answer: 'A and B disagree' });
    store.appendEvents(parentEvents());
    store.appendEvents(childEvents());
    auditor.catchUp();
  } finally {
    store.close();
    auditor.close();
  }
  return dataDir;
}

async function openParentRun(): Promise<{ page: Page; close(): Promise<void> }> {
  const serve = await startServe(recordedRuns());
  const context = await (await launchBrowser()).newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(60_000);
  await page.goto(serve.url.href);
  await page.getByRole('button', { name: new RegExp(`^${PARENT.goal}.*completed`) }).click();
  await page.locator('[data-step-id="research"]').waitFor();
  return { page, close: () => context.close() };
}

// The messages themselves, not the steps of a plan one of them carries.
const senders = (page: Page) => page.getByRole('list', { name: 'Bus messages' }).locator(':scope > li').evaluateAll((items) => items.map((item) => item.getAttribute('data-message-id')));
const inspector = (page: Page, id: string) => page.getByRole('region', { name: `Step ${id}` });
const childNodes = (page: Page) => page.locator(`[data-run-id="${CHILD.id}"]`);

describe('the bus and sub-agents in the app (Chromium through archon serve; runs recorded through the store)', () => {
  it('the Bus tab lists the run’s messages in order, filters them by agent and by topic, and a message’s link selects its step', async () => {
    const { page, close } = await openParentRun();
    await page.getByRole('tablist', { name: 'Run views' }).getByRole('tab', { name: 'Bus' }).click();
    const bus = page.getByRole('region', { name: 'Bus' });
    await bus.getByRole('status').filter({ hasText: '9 of 9 messages' }).waitFor();
    expect(await senders(page)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'm8', 'm9']);
    // A sub-agent is named by its step and goal, and the planner's plan reads as its steps.
    expect(await bus.locator('[data-message-id="m5"] .bus-message-head').textContent()).toContain(`coordinator → Sub-agent for step research: ${CHILD.goal}`);
    expect(await bus.locator('[data-message-id="m5"]').textContent()).not.toContain(CHILD.id);
    expect(await bus.locator('[data-message-id="m2"]').getByRole('list', { name: 'Plan' }).getByRole('listitem').allInnerTexts()).toEqual(['gather: list the two sources', 'research: read both sources (after gather)', 'report: write the comparison (after research)']);
    // The history lists the child under its parent, marked, not as a run of its own.
    const history = page.getByRole('list', { name: 'Run history' }).getByRole('listitem').locator('.run-open');
    expect(await history.allInnerTexts()).toEqual([expect.stringMatching(new RegExp(`^${PARENT.goal}`)), expect.stringMatching(new RegExp(`^Sub-agent run\\s+${CHILD.goal}`))]);
    expect(await axeViolations(page)).toEqual([]);

    await bus.getByLabel('Agent', { exact: true }).selectOption('executor:gather');
    await bus.getByRole('status').filter({ hasText: '2 of 9 messages' }).waitFor();
    expect(await senders(page)).toEqual(['m3', 'm4']);
    await bus.getByLabel('Agent', { exact: true }).selectOption(`subagent:${CHILD.id}`);
    await expect.poll(() => senders(page)).toEqual(['m5', 'm6']);

    await bus.getByLabel('Agent', { exact: true }).selectOption('');
    await bus.getByLabel('Topic', { exact: true }).selectOption('agent:coordinator');
    await expect.poll(() => senders(page)).toEqual(['m2', 'm4', 'm6', 'm9']);
    await bus.getByLabel('Topic', { exact: true }).selectOption('type:critique');
    await expect.poll(() => senders(page)).toEqual(['m7']);
    // A critique between run-level agents is about no step: it has no link.
    expect(await bus.getByRole('listitem').getByRole('button').count()).toBe(0);

    await bus.getByLabel('Topic', { exact: true }).selectOption('');
    // The sub-agent's answer belongs to the step that started it; the gather step's result to gather.
    await bus.locator('[data-message-id="m6"]').getByRole('button', { name: 'Go to step research' }).click();
    await inspector(page, 'research').waitFor();
    await bus.locator('[data-message-id="m4"]').getByRole('button', { name: 'Go to step gather' }).click();
    await inspector(page, 'gather').waitFor();
    await page.getByRole('tab', { name: 'Graph' }).click();
    await page.locator('[data-step-id="gather"].selected').waitFor();
    await close();
  });

  it('the sub-agent step shows its child run’s progress, expands into a group with the child’s steps and their status, and collapses again', async () => {
    const { page, close } = await openParentRun();
    const research = page.locator('[data-step-id="research"]');
    await expect.poll(() => research.textContent()).toContain('sub-agent: 2 of 3 steps done');
    expect(await research.getAttribute('data-expanded')).toBe('false');
    expect(await childNodes(page).count()).toBe(0);

    await research.getByRole('button', { name: 'Expand sub-agent research' }).click();
    await expect.poll(() => childNodes(page).count()).toBe(3);
    expect(await research.getAttribute('data-expanded')).toBe('true');
    for (const [stepId, status] of Object.entries(CHILD_STATUSES)) expect(await childNodes(page).and(page.locator(`[data-step-id="${stepId}"]`)).getAttribute('data-status'), stepId).toBe(status);
    // The group holds its child's steps: each lies inside the sub-agent step's box.
    const group = await research.boundingBox();
    for (const box of await childNodes(page).evaluateAll((nodes) => nodes.map((node) => node.getBoundingClientRect().toJSON() as DOMRect))) {
      expect(box.left).toBeGreaterThanOrEqual(group?.x ?? Infinity);
      expect(box.right).toBeLessThanOrEqual((group?.x ?? 0) + (group?.width ?? 0));
      expect(box.top).toBeGreaterThanOrEqual(group?.y ?? Infinity);
      expect(box.bottom).toBeLessThanOrEqual((group?.y ?? 0) + (group?.height ?? 0));
    }
    expect(await axeViolations(page)).toEqual([]);

    await childNodes(page).and(page.locator('[data-step-id="read-b"]')).click({ position: { x: 20, y: 10 } });
    await inspector(page, 'read-b').getByText('source B was already in the notes').first().waitFor();

    await research.getByRole('button', { name: 'Collapse sub-agent research' }).click();
    await expect.poll(() => childNodes(page).count()).toBe(0);
    expect(await research.getAttribute('data-expanded')).toBe('false');
    await close();
  });
});

const SUB_GOAL = 'Find the capital of France';
const isChild = (request: RecordedRequest) => new RegExp(`^Goal: ${SUB_GOAL}$`, 'm').test(requestText(request));

/** The parent plans a sub-agent step and a report after it; the child plans `lookup` then `check`, which waits until the test ends. */
function parentWithSubagent(request: RecordedRequest): ScriptedReply {
  if (request.purpose === 'plan') {
    return isChild(request)
      ? planReply([{ id: 'lookup', description: 'look the capital up' }, { id: 'check', description: 'check it', dependencies: ['lookup'] }])
      : planReply([{ id: 'research', kind: 'subagent', goal: SUB_GOAL }, { id: 'report', description: 'Write the report', dependencies: ['research'] }]);
  }
  return stepIdOf(request) === 'lookup' ? { content: 'Paris' } : { hang: true };
}

describe('a live run with a sub-agent (Chromium through archon serve, the real engine against a scripted model server)', () => {
  it('the sub-agent step follows its child run live, expands to the child’s steps as they run, and the Bus tab shows the hand-offs to it', async () => {
    const { page, server } = await openApp(parentWithSubagent);
    await startGoal(page, 'Write a short report on the capital of France');
    // The run's plan, and the child's if the policy asks for it, are approved as they come; the child then reaches its second step.
    await expect
      .poll(
        async () => {
          const dialog = page.getByRole('dialog', { name: 'Approval: plan' });
          if (await dialog.isVisible()) await dialog.getByRole('button', { name: 'Approve' }).click();
          return server.chatRequests.some((request) => stepIdOf(request) === 'check');
        },
        { timeout: 90_000, interval: 500 },
      )
      .toBe(true);
    const research = page.locator('[data-step-id="research"]');
    await expect.poll(() => research.textContent()).toContain('sub-agent: 1 of 2 steps done');
    expect(await research.getAttribute('data-status')).toBe('running');

    await research.getByRole('button', { name: 'Expand sub-agent research' }).click();
    const inner = page.locator('[data-run-id]');
    await expect.poll(() => inner.evaluateAll((nodes) => nodes.map((node) => [node.getAttribute('data-step-id'), node.getAttribute('data-status')]))).toEqual([
      ['lookup', 'completed'],
      ['check', 'running'],
    ]);
    const childRunId = (await inner.first().getAttribute('data-run-id')) as string;
    await research.getByRole('button', { name: 'Collapse sub-agent research' }).click();
    await expect.poll(() => inner.count()).toBe(0);

    await page.getByRole('tab', { name: 'Bus' }).click();
    const bus = page.getByRole('region', { name: 'Bus' });
    // Each message once (the plan's task and result, the sub-agent's task): the run's fetched events and the live ones overlap, and the fold keeps one of each seq.
    await expect.poll(async () => (await senders(page)).length).toBeGreaterThanOrEqual(3);
    const listed = await senders(page);
    expect(new Set(listed).size).toBe(listed.length);
    await bus.getByLabel('Agent', { exact: true }).selectOption(`subagent:${childRunId}`);
    const shown = bus.getByRole('list', { name: 'Bus messages' }).locator(':scope > li');
    await shown.first().waitFor();
    for (const text of await shown.allTextContents()) expect(text).toContain('Sub-agent for step research: ');
    await shown.first().getByRole('button', { name: 'Go to step research' }).click();
    await inspector(page, 'research').waitFor();
    await bus.getByLabel('Agent', { exact: true }).selectOption('planner');
    await expect.poll(() => shown.allTextContents()).toEqual([expect.stringMatching(/task.*coordinator → planner/), expect.stringMatching(/result.*planner → coordinator/)]);
    expect(await axeViolations(page)).toEqual([]);
  });
});
