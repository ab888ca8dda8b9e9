import type { Page } from 'playwright-core';
import { describe, expect, it, vi } from 'vitest';
import { axeViolations } from '../../../support/axe';
import { Auditor } from '../../../../src/auditor/auditor';
import { ArchonStore } from '../../../../src/core/store/archon-store';
import { RunOptionsSchema } from '../../../../src/shared/schemas/run';
import { useServe } from '../../../support/archon-process';
import { useBrowser } from '../../../support/browser';
import { useTempDirs } from '../../../support/temp-dir';
import { FIRST_PLAN, recoveredRunEvents, REPLACEMENTS } from './recovered-run';

// A browser and a host on a loaded 2-core machine running the whole suite: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });

const tempDir = useTempDirs();
const startServe = useServe();
const launchBrowser = useBrowser();

const GOAL = 'A table of totals';

/** A data dir holding one finished run that validation and recovery went through, as the engine records it, and audited. */
function recordedRun(): string {
  const dataDir = tempDir();
  const auditor = Auditor.start(dataDir);
  const store = ArchonStore.open(dataDir);
  try {
    const runs = store.runs;
    const now = new Date().toISOString();
    runs.createRun({ id: 'recovered', goal: GOAL, policy: 'balanced', options: RunOptionsSchema.parse({ modelUrl: 'http://127.0.0.1:1/v1', model: '', policy: 'balanced', concurrency: null, maxTokens: null, maxCostUsd: null, workspace: dataDir, maxIterations: 10 }), now });
    runs.savePlan('recovered', [...FIRST_PLAN, ...REPLACEMENTS]);
    runs.setStepStatus('recovered', 'gather', 'completed', now, { result: 'figures' });
    runs.setStepStatus('recovered', 'draft', 'failed', now, { error: 'Still no totals row' });
    runs.setStepStatus('recovered', 'review', 'skipped', now, { error: 'replaced by revision 1' });
    runs.setStepStatus('recovered', 'draft2', 'completed', now, { result: '| a | total |' });
    runs.setStepStatus('recovered', 'review2', 'completed', now, { result: 'fine' });
    runs.setRunStatus('recovered', 'completed', now, { answer: 'The totals are in the table.' });
    store.appendEvents(recoveredRunEvents('recovered', GOAL));
    auditor.catchUp();
  } finally {
    store.close();
    auditor.close();
  }
  return dataDir;
}

const node = (page: Page, id: string) => page.locator(`[data-step-id="${id}"]`);
const inspector = (page: Page, id: string) => page.getByRole('region', { name: `Step ${id}` });

describe('validation and recovery in the app (Chromium through archon serve)', () => {
  it('shows verdict badges, repairs, the revision, the replaced steps greyed with links to their replacements, the verdicts in the inspector and the gap trend', async () => {
    const serve = await startServe(recordedRun());
    const context = await (await launchBrowser()).newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(60_000);
    await page.goto(serve.url.href);
    await page.getByRole('button', { name: new RegExp(`${GOAL}.*completed`) }).click();

    await expect.poll(() => page.getByLabel('Gap trend').textContent()).toContain('Gap to the goal: 0.60 → 0.45 → 0.45');
    await node(page, 'draft2').waitFor();
    expect(await node(page, 'draft').getAttribute('data-status')).toBe('failed');
    expect(await node(page, 'draft').getAttribute('data-replaced')).toBe('true');
    expect(await node(page, 'draft').getAttribute('data-verdict')).toBe('fail');
    expect(await node(page, 'draft').textContent()).toContain('✗ fail · gap 0.55');
    expect(await node(page, 'draft').textContent()).toContain('1 repair');
    expect(await node(page, 'review').getAttribute('data-replaced')).toBe('true');
    expect(await node(page, 'review').getAttribute('data-status')).toBe('skipped');
    expect(await node(page, 'draft2').getAttribute('data-replaced')).toBeNull();
    expect(await node(page, 'draft2').getAttribute('data-revision')).toBe('1');
    expect(await node(page, 'draft2').textContent()).toContain('✓ pass · gap 0.05');
    expect(await node(page, 'gather').getAttribute('data-verdict')).toBe('pass');
    expect(await node(page, 'gather').getAttribute('data-revision')).toBeNull();

    await node(page, 'draft').getByRole('button', { name: 'Go to replacement draft2' }).click();
    await inspector(page, 'draft2').getByText('Added by plan revision 1.').waitFor();
    await node(page, 'draft2').and(page.locator('.selected')).waitFor();

    await node(page, 'draft').click({ position: { x: 20, y: 10 } });
    const draft = inspector(page, 'draft');
    const verdicts = draft.getByRole('list', { name: 'Verdicts' });
    await verdicts.waitFor();
    expect(await verdicts.getByRole('listitem').filter({ hasText: /^fail gap/ }).count()).toBe(2);
    await verdicts.getByRole('list', { name: 'Reasons' }).first().getByText('The table has no totals row').waitFor();
    await verdicts.getByRole('list', { name: 'Checks' }).first().getByText('✗ expected format — no markdown table').waitFor();
    await draft.getByRole('list', { name: 'Repairs' }).getByText('The table has no totals row').waitFor();
    await draft.getByRole('button', { name: 'review2' }).click();
    await inspector(page, 'review2').waitFor();

    await node(page, 'draft').click({ position: { x: 20, y: 10 } });
    await inspector(page, 'draft').waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await context.close();
  });
});
