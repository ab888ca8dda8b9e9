import { afterEach, describe, expect, it, vi } from 'vitest';
import { axeViolations } from '../../../support/axe';
import { graphGeometry, overlaps, inside, visiblePart, type Box } from '../../../support/graph-geometry';
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
  const context = await (await launchBrowser()).newContext({ viewport });
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
  it('a 12-step plan at 1280×800: fitted whole, text at 11 px or more, no overlaps, no minimap, the roots in the first column; larger when roomy; clamped with a minimap clear of the nodes when small', async () => {
    const { page, context } = await openRun((request) => (request.purpose === 'plan' ? planReply(FAN) : { hang: true }), { width: 1280, height: 800 });
    await page.locator('[data-step-id="a1"][data-status="running"]').waitFor();
    await expect.poll(async () => {
      const drawn = await graphGeometry(page);
      return drawn.nodes.every((node) => inside(node.box, drawn.pane));
    }).toBe(true);
    const fitted = await graphGeometry(page);
    expect(fitted.zoom).toBeGreaterThanOrEqual(MIN_ZOOM);
    expect(fitted.zoom).toBeLessThan(1);
    for (const node of fitted.nodes) expect(node.smallestTextPx, node.id).toBeGreaterThanOrEqual(READABLE_TEXT_PX);
    for (const [index, node] of fitted.nodes.entries()) for (const other of fitted.nodes.slice(index + 1)) expect(overlaps(node.box, other.box), `${node.id} and ${other.id}`).toBe(false);
    for (const node of fitted.nodes) expect(overlaps(node.box, fitted.controls), node.id).toBe(false);
    expect(fitted.minimap).toBeNull();
    const firstColumn = Math.min(...fitted.nodes.map((node) => node.box.left));
    for (const root of ROOTS) expect(fitted.nodes.find((node) => node.id === root)?.box.left, root).toBe(firstColumn);
    for (const node of fitted.nodes.filter((candidate) => !ROOTS.includes(candidate.id))) expect(node.box.left, node.id).toBeGreaterThan(firstColumn);
    expect(await page.locator('[data-step-id="a1"]').getAttribute('aria-label')).toBe('Step a1, running');

    expect(await axeViolations(page)).toEqual([]);

    // More room: the graph is fitted again, larger, every node showing its role, status and description.
    await page.setViewportSize({ width: 2560, height: 1440 });
    await expect.poll(async () => (await graphGeometry(page)).zoom).toBeGreaterThan(fitted.zoom + 0.2);
    const roomy = await graphGeometry(page);
    for (const node of roomy.nodes) expect(inside(node.box, roomy.pane), node.id).toBe(true);
    for (const node of roomy.nodes) expect(node.smallestTextPx, node.id).toBeGreaterThanOrEqual(READABLE_TEXT_PX);
    expect(roomy.minimap).toBeNull();
    await expect.poll(() => page.locator('[data-step-id="a1"]').textContent()).toMatch(/a1.*researcher.*running.*collect the quarterly sales figures/);

    // A small window with the step details open: clamped at the minimum zoom, the first column in view, the minimap in its strip clear of the nodes.
    await page.setViewportSize({ width: 1024, height: 700 });
    await page.getByRole('button', { name: 'Show step details' }).click();
    await expect.poll(async () => (await graphGeometry(page)).zoom).toBeCloseTo(MIN_ZOOM);
    const small = await graphGeometry(page);
    expect(small.nodes.find((node) => node.id === 'a1')?.box.left).toBeGreaterThanOrEqual(small.pane.left);
    for (const node of small.nodes) expect(node.smallestTextPx, node.id).toBeGreaterThanOrEqual(READABLE_TEXT_PX);
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
      const drawn = await graphGeometry(page);
      return inside(drawn.nodes.find((node) => node.id === 's12')?.box as Box, drawn.pane);
    }).toBe(true);
    const drawn = await graphGeometry(page);
    expect(drawn.zoom).toBeCloseTo(MIN_ZOOM);
    expect(inside(drawn.nodes.find((node) => node.id === 's1')?.box as Box, drawn.pane)).toBe(false);
    await context.close();
  });
});
