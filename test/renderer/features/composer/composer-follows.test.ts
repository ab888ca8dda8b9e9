import { describe, expect, it, vi } from 'vitest';
import { ArchonStore } from '../../../../src/core/store/archon-store';
import { RunOptionsSchema } from '../../../../src/shared/schemas/run';
import { useServe } from '../../../support/archon-process';
import { useBrowser } from '../../../support/browser';
import { useTempDirs } from '../../../support/temp-dir';

// A browser and a host on a loaded 2-core machine running the whole suite: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });

const tempDir = useTempDirs();
const startServe = useServe();
const launchBrowser = useBrowser();

/** A data dir with more finished runs than the run list shows without scrolling. */
function finishedRuns(count: number): string {
  const dataDir = tempDir();
  const store = ArchonStore.open(dataDir);
  try {
    const options = RunOptionsSchema.parse({ modelUrl: 'http://127.0.0.1:1/v1', model: '', policy: 'balanced', concurrency: null, maxTokens: null, maxCostUsd: null, workspace: dataDir, maxIterations: 10 });
    for (let index = 0; index < count; index++) {
      const id = `run-${String(index).padStart(3, '0')}`;
      const now = new Date(Date.UTC(2026, 0, 1, 0, index)).toISOString();
      store.runs.createRun({ id, goal: `Finished goal ${index}`, policy: 'balanced', options, now });
      store.runs.setRunStatus(id, 'completed', now, { answer: 'done' });
    }
  } finally {
    store.close();
  }
  return dataDir;
}

describe('the goal composer follows the desk, in Chromium through archon serve', () => {
  it('offers the model and server just saved in Settings, and Continue far down the run list brings the composer into view with the cursor in its goal', async () => {
    const serve = await startServe(finishedRuns(30), ['--workspace', tempDir()]);
    const page = await (await launchBrowser()).newPage({ viewport: { width: 1024, height: 700 } });
    page.setDefaultTimeout(60_000);
    await page.goto(serve.url.href);
    await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
    const nav = page.getByRole('navigation', { name: 'Main' });
    const composer = page.getByRole('form', { name: 'New run' });

    await nav.getByRole('button', { name: 'Settings' }).click();
    await page.getByLabel('Model', { exact: true }).fill('other-model');
    await page.getByLabel('Model', { exact: true }).press('Tab');
    await page.getByRole('status').filter({ hasText: /^Saved\.$/ }).waitFor();
    await page.getByLabel('Preset').selectOption('builtin');
    await page.getByRole('status').filter({ hasText: /^Saved\.$/ }).waitFor();
    await nav.getByRole('button', { name: 'Runs' }).click();
    await expect.poll(() => composer.getByLabel('Model server').getAttribute('placeholder')).toBe('builtin');
    expect(await composer.getByLabel('Model', { exact: true }).getAttribute('placeholder')).toBe('other-model');

    await page.getByRole('button', { name: 'Continue run Finished goal 0', exact: true }).click();
    await composer.getByRole('status').filter({ hasText: 'Continuing run run-000: Finished goal 0' }).waitFor();
    const goal = composer.getByLabel('Goal');
    await expect.poll(() => goal.evaluate((field) => field === document.activeElement)).toBe(true);
    const box = await goal.boundingBox();
    expect(box && box.y >= 0 && box.y + box.height <= 700).toBe(true);
    await page.close();
  });
});
