import { describe, expect, it, vi } from 'vitest';
import { Auditor } from '../../../../src/auditor/auditor';
import { ArchonStore } from '../../../../src/core/store/archon-store';
import { RunOptionsSchema } from '../../../../src/shared/schemas/run';
import { useServe } from '../../../support/archon-process';
import { axeViolations } from '../../../support/axe';
import { useBrowser } from '../../../support/browser';
import { useTempDirs } from '../../../support/temp-dir';
import { CHILD, CHILD_PLAN, childEvents, PARENT, PARENT_PLAN, parentEvents } from '../bus/subagent-run';

// A browser and a host on a loaded 2-core machine: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });

const tempDir = useTempDirs();
const startServe = useServe();
const launchBrowser = useBrowser();

/** Today's parent run and its sub-agent's run, recorded through the store and audited: the parent's spawn is a finding. */
function auditedRunsOfToday(): string {
  const dataDir = tempDir();
  const auditor = Auditor.start(dataDir);
  const store = ArchonStore.open(dataDir);
  try {
    const now = new Date().toISOString();
    const options = (extra: object) => RunOptionsSchema.parse({ modelUrl: 'http://127.0.0.1:1/v1', model: '', policy: 'balanced', concurrency: null, maxTokens: null, maxCostUsd: null, workspace: dataDir, maxIterations: 10, ...extra });
    store.runs.createRun({ id: PARENT.id, goal: PARENT.goal, policy: 'balanced', options: options({}), now });
    store.runs.createRun({ id: CHILD.id, goal: CHILD.goal, policy: 'balanced', options: options({ parentRunId: PARENT.id, parentStepId: 'research', depth: 1 }), now });
    store.runs.savePlan(PARENT.id, PARENT_PLAN);
    store.runs.savePlan(CHILD.id, CHILD_PLAN);
    store.runs.setRunStatus(CHILD.id, 'completed', now, { answer: 'A says yes, B says no' });
    store.runs.setRunStatus(PARENT.id, 'completed', now, { answer: 'A and B disagree' });
    store.appendEvents([...parentEvents(), ...childEvents()].map((event) => ({ ...event, ts: now })));
    auditor.catchUp();
  } finally {
    store.close();
    auditor.close();
  }
  return dataDir;
}

describe('the Audit view (Chromium through archon serve)', () => {
  it("names the run of each of the day's findings and opens it, and its evidence at the step it is about", async () => {
    const serve = await startServe(auditedRunsOfToday());
    const context = await (await launchBrowser()).newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(60_000);
    await page.goto(serve.url.href);
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('button', { name: 'Audit' }).click();
    const spawn = page.getByRole('list', { name: 'Findings' }).getByRole('listitem').filter({ hasText: 'Step research spawned a sub-agent' });
    const runLink = spawn.getByRole('button', { name: `run ${PARENT.id.slice(0, 8)}: ${PARENT.goal}` });
    await runLink.waitFor();
    expect(await axeViolations(page)).toEqual([]);

    await runLink.click();
    expect(await nav.getByRole('button', { name: 'Runs' }).getAttribute('aria-current')).toBe('page');
    await page.locator('[data-step-id="research"]').waitFor();

    await nav.getByRole('button', { name: 'Audit' }).click();
    await spawn.getByText('Evidence (1)').click();
    await spawn.getByRole('button', { name: 'subagent.started #10' }).click();
    await page.getByRole('region', { name: 'Step research' }).waitFor();
    await context.close();
  });
});
