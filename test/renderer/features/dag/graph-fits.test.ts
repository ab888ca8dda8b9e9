import type { Page } from 'playwright-core';
import { describe, expect, it, vi } from 'vitest';
import { planReply, stepIdOf, type PlanStepScript } from '../../../kit/scripted-model-server';
import { MIN_ZOOM, READABLE_TEXT_PX } from '../../../../src/renderer/src/features/dag/dag-viewport';
import { graphGeometry, overlaps, inside, visiblePart, type Box, type GraphGeometry } from '../../../support/graph-geometry';
import { useAppPage, startGoal } from '../../../support/app-page';
import { axeViolations } from '../../../support/axe';

// A browser, a host and a run on a loaded 2-core machine running the whole suite: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });
const openApp = useAppPage();

/** A release: a scope step fans out into four branches of different lengths, a root of its own beside them, and a review that joins them all. */
const RELEASE: PlanStepScript[] = [
  { id: 'scope', description: 'read the issue and list what changes' },
  { id: 'changelog', description: 'draft the changelog entry' },
  { id: 'parse-spec', description: 'specify the new parser rules', dependencies: ['scope'] },
  { id: 'parser-code', description: 'write the parser', dependencies: ['parse-spec'] },
  { id: 'parser-tests', description: 'test the parser', dependencies: ['parser-code'] },
  { id: 'benchmarks', description: 'measure the parser against the old one', dependencies: ['parser-code'] },
  { id: 'ui-sketch', description: 'sketch the settings screen', dependencies: ['scope'] },
  { id: 'ui-code', description: 'build the settings screen', dependencies: ['ui-sketch'] },
  { id: 'docs-outline', description: 'outline the user guide changes', dependencies: ['scope'] },
  { id: 'docs-write', description: 'write the user guide changes', dependencies: ['docs-outline'] },
  { id: 'security', description: 'review the change for security', dependencies: ['scope'] },
  { id: 'review', description: 'review everything together', dependencies: ['parser-tests', 'benchmarks', 'ui-code', 'docs-write', 'security', 'changelog'] },
];

const nodeBox = (drawn: GraphGeometry, id: string) => drawn.nodes.find((node) => node.id === id)?.box as Box;

async function openPlan(page: Page): Promise<void> {
  await startGoal(page, 'Ship the new parser');
  await page.getByRole('dialog', { name: 'Approval: plan' }).getByRole('button', { name: 'Approve' }).click();
  await expect.poll(() => page.locator('[data-step-id]').count()).toBe(RELEASE.length);
}

/** How many presses of Tab, from the top of the page, until a graph node has the focus; null if 25 do not reach one. */
async function tabsToGraph(page: Page): Promise<number | null> {
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  for (let presses = 1; presses <= 25; presses += 1) {
    await page.keyboard.press('Tab');
    if (await page.evaluate(() => document.activeElement?.hasAttribute('data-step-id') ?? false)) return presses;
  }
  return null;
}

const focusedStep = (page: Page) => page.evaluate(() => document.activeElement?.getAttribute('data-step-id') ?? null);

const transformOf = (page: Page) => page.evaluate(() => getComputedStyle(document.querySelector('.react-flow__viewport') as Element).transform);
const zoomOf = (page: Page) => page.evaluate(() => new DOMMatrix(getComputedStyle(document.querySelector('.react-flow__viewport') as Element).transform).a);

/** The plan at 1024×700 with its first steps held until `release`, and the joining review then held running. */
async function openHeldRun(): Promise<{ page: Page; release: () => void }> {
  let release = () => undefined as void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const { page } = await openApp(async (request) => {
    if (request.purpose === 'plan') return planReply(RELEASE);
    if (stepIdOf(request) === 'review') return { hang: true };
    await released;
    return { content: `done ${stepIdOf(request)}` };
  }, { viewport: { width: 1024, height: 700 } });
  await openPlan(page);
  // The step details open take the graph's room: the plan no longer fits at readable size.
  await page.getByRole('button', { name: 'Show step details' }).click();
  await page.locator('[data-step-id="scope"][data-status="running"]').waitFor();
  await expect.poll(async () => {
    const drawn = await graphGeometry(page);
    return inside(nodeBox(drawn, 'scope'), drawn.pane);
  }).toBe(true);
  return { page, release };
}

describe('the run graph fits the desk (Chromium through archon serve)', () => {
  it('a 12-step plan at 1440×900: every node in the pane at readable size, clear of the minimap; one tab stop, named nodes, arrows and Enter; no axe violation in the graph', async () => {
    const { page } = await openApp((request) => (request.purpose === 'plan' ? planReply(RELEASE) : { hang: true }), { viewport: { width: 1440, height: 900 } });
    await openPlan(page);
    await page.locator('[data-step-id="scope"][data-status="running"]').waitFor();
    await expect.poll(async () => {
      const drawn = await graphGeometry(page);
      return drawn.nodes.filter((node) => !inside(node.box, drawn.pane)).map((node) => node.id);
    }).toEqual([]);
    const drawn = await graphGeometry(page);
    for (const node of drawn.nodes) expect(node.smallestTextPx, node.id).toBeGreaterThanOrEqual(READABLE_TEXT_PX);
    if (drawn.minimap) for (const node of drawn.nodes) expect(overlaps(node.box, drawn.minimap), node.id).toBe(false);

    const nodes = page.locator('[data-step-id]');
    const names = await nodes.evaluateAll((all) => all.map((node) => node.getAttribute('aria-label')));
    expect(names).toContain('Step scope, running');
    expect(names).toContain('Step review, pending');
    expect(await page.getByRole('group', { name: /^Step [\w-]+, (pending|running)$/ }).count()).toBe(RELEASE.length);
    expect(await page.locator('[data-step-id][tabindex="0"]').count()).toBe(1);
    // The first node in reading order (a root in the first column) is the graph's tab stop.
    const first = await page.locator('[data-step-id][tabindex="0"]').getAttribute('data-step-id');
    expect(['scope', 'changelog']).toContain(first);

    const presses = await tabsToGraph(page);
    expect(presses).not.toBeNull();
    expect(await focusedStep(page)).toBe(first);
    // Tab leaves the graph after one node: no other node, edge or handle is a tab stop.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.closest('.react-flow__renderer') !== null)).toBe(false);
    await page.keyboard.press('Shift+Tab');
    expect(await focusedStep(page)).toBe(first);
    await page.keyboard.press('ArrowDown');
    const second = await focusedStep(page);
    expect(second).not.toBe(first);
    expect(await page.locator('[data-step-id][tabindex="0"]').getAttribute('data-step-id')).toBe(second);
    await page.keyboard.press('End');
    expect(await focusedStep(page)).toBe('review');
    await page.keyboard.press('Enter');
    await page.getByRole('region', { name: 'Step review', exact: true }).waitFor();

    expect(await axeViolations(page)).toEqual([]);
  });

  it('at 1024×700, where the plan does not fit at readable size, the view follows the work to a later step that starts running', async () => {
    const { page, release } = await openHeldRun();
    const before = await graphGeometry(page);
    expect(inside(nodeBox(before, 'review'), before.pane)).toBe(false);
    for (const node of before.nodes) expect(node.smallestTextPx, node.id).toBeGreaterThanOrEqual(READABLE_TEXT_PX);
    expect(before.minimap).not.toBeNull();
    for (const node of before.nodes) expect(overlaps(visiblePart(node.box, before.pane), before.minimap as Box), node.id).toBe(false);
    expect(before.pane.bottom - before.pane.top).toBeGreaterThanOrEqual(240);

    release();
    await page.locator('[data-step-id="review"][data-status="running"]').waitFor();
    await expect.poll(async () => {
      const drawn = await graphGeometry(page);
      return inside(nodeBox(drawn, 'review'), drawn.pane);
    }).toBe(true);
    expect(await zoomOf(page)).toBeCloseTo(MIN_ZOOM);
  });

  it('stops following once the operator moves the view, and follows again from the Fit button', async () => {
    const { page, release } = await openHeldRun();
    const pane = (await graphGeometry(page)).pane;
    await page.mouse.move(pane.left + 20, pane.top + 20);
    await page.mouse.wheel(0, -100);
    await expect.poll(() => zoomOf(page)).toBeGreaterThan(MIN_ZOOM);
    const moved = await transformOf(page);

    release();
    await page.locator('[data-step-id="review"][data-status="running"]').waitFor();
    // Two frames after the step started: the follow would have moved the view by now.
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    expect(await transformOf(page)).toBe(moved);
    const drawn = await graphGeometry(page);
    expect(inside(nodeBox(drawn, 'review'), drawn.pane)).toBe(false);

    await page.getByRole('button', { name: 'Fit view' }).click();
    await expect.poll(async () => {
      const fitted = await graphGeometry(page);
      return inside(nodeBox(fitted, 'review'), fitted.pane);
    }).toBe(true);
  });
});
