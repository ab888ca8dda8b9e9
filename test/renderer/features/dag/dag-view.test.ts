import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { planReply, stepIdOf, startModelServer, type ModelServerOptions, type PlanStepScript, type ScriptedModelServer } from '../../../kit/scripted-model-server';
import { MIN_ZOOM, READABLE_TEXT_PX } from '../../../../src/renderer/src/features/dag/dag-viewport';
import { useServe } from '../../../support/archon-process';
import { useBrowser } from '../../../support/browser';
import { useTempDirs } from '../../../support/temp-dir';

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

async function openRun(reply: ModelServerOptions['reply'], viewport: { width: number; height: number }) {
  server = await startModelServer({ reply });
  const serve = await startServe(tempDir(), ['--model-url', server.url, '--workspace', tempDir()]);
  const context = await (await launchBrowser()).newContext({ bypassCSP: true, viewport });
  const page = await context.newPage();
  page.setDefaultTimeout(60_000);
  await page.goto(serve.url.href);
  await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
  await page.getByLabel('Goal').fill('Draw a readable graph');
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  await page.getByRole('dialog', { name: 'Approval: plan' }).getByRole('button', { name: 'Approve' }).click();
  await expect.poll(() => page.locator('[data-step-id]').count(), { timeout: 60_000 }).toBe(12);
  return { page, context };
}

interface Box {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

interface Geometry {
  zoom: number;
  pane: Box;
  minimap: Box | null;
  controls: Box;
  nodes: { id: string; box: Box; smallestTextPx: number }[];
}

/** Where the graph is drawn: the flow's zoom, the pane, the minimap strip, each node's box and its smallest rendered text. */
function geometry(page: Page): Promise<Geometry> {
  return page.evaluate(() => {
    const boxOf = (element: Element) => {
      const { left, top, right, bottom } = element.getBoundingClientRect();
      return { left, top, right, bottom };
    };
    const viewport = document.querySelector('.react-flow__viewport') as HTMLElement;
    const zoom = new DOMMatrix(getComputedStyle(viewport).transform).a;
    const minimap = document.querySelector('.dag-toolbar .react-flow__minimap');
    const nodes = [...document.querySelectorAll('[data-step-id]')].map((node) => {
      const texts = [node, ...node.querySelectorAll('*')].filter((element) => [...element.childNodes].some((child) => child.nodeType === Node.TEXT_NODE && child.textContent?.trim()));
      return {
        id: node.getAttribute('data-step-id') ?? '',
        box: boxOf(node),
        smallestTextPx: Math.min(...texts.map((element) => Number.parseFloat(getComputedStyle(element).fontSize) * zoom)),
      };
    });
    return { zoom, pane: boxOf(document.querySelector('.dag-pane') as Element), minimap: minimap && boxOf(minimap), controls: boxOf(document.querySelector('.react-flow__controls') as Element), nodes };
  });
}

const overlaps = (one: Box, other: Box) => one.left < other.right && other.left < one.right && one.top < other.bottom && other.top < one.bottom;
const inside = (box: Box, room: Box) => box.left >= room.left && box.right <= room.right && box.top >= room.top && box.bottom <= room.bottom;
const visiblePart = (box: Box, pane: Box): Box => ({ left: Math.max(box.left, pane.left), top: Math.max(box.top, pane.top), right: Math.min(box.right, pane.right), bottom: Math.min(box.bottom, pane.bottom) });

/** Three chains, and a root (`late`) that feeds only the fourth step of one: twelve steps in four columns. */
const FAN: PlanStepScript[] = [
  { id: 'a1', description: 'collect the quarterly sales figures', role: 'researcher' },
  { id: 'a2', description: 'clean the figures', dependencies: ['a1'] },
  { id: 'a3', description: 'compute the totals per region', dependencies: ['a2'], role: 'analyst' },
  { id: 'a4', description: 'merge the totals with the late corrections', dependencies: ['a3', 'late'] },
  { id: 'b1', description: 'collect the support tickets', role: 'researcher' },
  { id: 'b2', description: 'group the tickets by product', dependencies: ['b1'] },
  { id: 'b3', description: 'rank the products by ticket count', dependencies: ['b2'] },
  { id: 'b4', description: 'summarise the top complaints', dependencies: ['b3'], role: 'writer' },
  { id: 'c1', description: 'read last year\'s report' },
  { id: 'c2', description: 'list the promises made', dependencies: ['c1'] },
  { id: 'c3', description: 'check which promises were kept', dependencies: ['c2'] },
  { id: 'late', description: 'fetch the late corrections from finance' },
];
const ROOTS = ['a1', 'b1', 'c1', 'late'];

describe('a readable plan graph (Chromium through archon serve)', () => {
  it('a 12-step plan at 1280×800: text at 11 px or more, no overlaps, the minimap and the controls clear of the nodes, the roots in the first column; it refits on resize', async () => {
    const { page, context } = await openRun((request) => (request.purpose === 'plan' ? planReply(FAN) : { hang: true }), { width: 1280, height: 800 });
    await page.locator('[data-step-id="a1"][data-status="running"]').waitFor();
    await expect.poll(async () => (await geometry(page)).zoom).toBeCloseTo(MIN_ZOOM);
    const clamped = await geometry(page);
    for (const node of clamped.nodes) expect(node.smallestTextPx, node.id).toBeGreaterThanOrEqual(READABLE_TEXT_PX);
    for (const [index, node] of clamped.nodes.entries()) for (const other of clamped.nodes.slice(index + 1)) expect(overlaps(node.box, other.box), `${node.id} and ${other.id}`).toBe(false);
    // Clamped, the graph does not fit: the minimap shows, in its own strip, and the first column is in view.
    expect(clamped.minimap).not.toBeNull();
    for (const node of clamped.nodes) expect(overlaps(visiblePart(node.box, clamped.pane), clamped.minimap as Box), node.id).toBe(false);
    for (const node of clamped.nodes) expect(overlaps(visiblePart(node.box, clamped.pane), clamped.controls), node.id).toBe(false);
    const firstColumn = Math.min(...clamped.nodes.map((node) => node.box.left));
    for (const root of ROOTS) expect(clamped.nodes.find((node) => node.id === root)?.box.left, root).toBe(firstColumn);
    for (const node of clamped.nodes.filter((candidate) => !ROOTS.includes(candidate.id))) expect(node.box.left, node.id).toBeGreaterThan(firstColumn);
    expect(clamped.nodes.find((node) => node.id === 'a1')?.box.left).toBeGreaterThanOrEqual(clamped.pane.left);
    await expect.poll(() => page.locator('[data-step-id="a1"]').textContent()).toMatch(/a1.*researcher.*collect the quarterly sales figures.*running/);

    const axe = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
    await page.addScriptTag({ content: axe });
    const violations = await page.evaluate(async () => {
      const result = await (window as unknown as { axe: { run(options: object): Promise<{ violations: { id: string; nodes: { target: unknown }[] }[] }> } }).axe.run({ runOnly: ['color-contrast', 'label', 'button-name'] });
      return result.violations.map((violation) => `${violation.id}: ${JSON.stringify(violation.nodes.map((item) => item.target))}`);
    });
    expect(violations).toEqual([]);

    // Room for the whole graph: it is fitted above the minimum zoom, all in view, and the minimap goes.
    await page.setViewportSize({ width: 2560, height: 1440 });
    await expect.poll(async () => (await geometry(page)).zoom).toBeGreaterThan(MIN_ZOOM + 0.05);
    const roomy = await geometry(page);
    for (const node of roomy.nodes) expect(inside(node.box, roomy.pane), node.id).toBe(true);
    expect(roomy.minimap).toBeNull();

    // Back to a small window: clamped again, the first column in view.
    await page.setViewportSize({ width: 1024, height: 700 });
    await expect.poll(async () => (await geometry(page)).zoom).toBeCloseTo(MIN_ZOOM);
    const small = await geometry(page);
    expect(small.nodes.find((node) => node.id === 'a1')?.box.left).toBeGreaterThanOrEqual(small.pane.left);
    expect(small.minimap).not.toBeNull();
    for (const node of small.nodes) expect(overlaps(visiblePart(node.box, small.pane), small.minimap as Box), node.id).toBe(false);
    await context.close();
  });

  it('highlights the step that waits for the operator and brings it into view, however far right it is', async () => {
    const chain: PlanStepScript[] = Array.from({ length: 12 }, (_, index) => ({ id: `s${index + 1}`, description: `step ${index + 1} of a long chain`, dependencies: index === 0 ? [] : [`s${index}`] }));
    const { page, context } = await openRun((request) => {
      if (request.purpose === 'plan') return planReply(chain);
      if (request.purpose === 'final') return { content: 'written' };
      if (stepIdOf(request) !== 's12' || request.body.messages?.some((message) => message.role === 'tool')) return { content: `done ${stepIdOf(request)}` };
      return { toolCalls: [{ name: 'write_file', arguments: { path: 'note.txt', content: 'last' } }] };
    }, { width: 1280, height: 800 });
    await page.getByRole('dialog', { name: 'Approval: tool call' }).waitFor();
    await page.locator('[data-step-id="s12"][data-waiting="true"]').waitFor();
    expect(await page.locator('[data-waiting="true"]').count()).toBe(1);
    await expect.poll(async () => {
      const drawn = await geometry(page);
      return inside(drawn.nodes.find((node) => node.id === 's12')?.box as Box, drawn.pane);
    }).toBe(true);
    const drawn = await geometry(page);
    expect(drawn.zoom).toBeCloseTo(MIN_ZOOM);
    expect(inside(drawn.nodes.find((node) => node.id === 's1')?.box as Box, drawn.pane)).toBe(false);
    await context.close();
  });
});
