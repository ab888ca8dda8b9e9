import { describe, expect, it, vi } from 'vitest';
import { ArchonStore } from '../../../../src/core/store/archon-store';
import type { MemoryItem } from '../../../../src/shared/schemas/memory';
import { planReply } from '../../../kit/scripted-model-server';
import { startGoal, useAppPage } from '../../../support/app-page';
import { axeViolations } from '../../../support/axe';

// A browser, a host and a run on a loaded 2-core machine: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });
const openApp = useAppPage();

function withStore<T>(dataDir: string, use: (store: ArchonStore) => T): T {
  const store = ArchonStore.open(dataDir);
  try {
    return use(store);
  } finally {
    store.close();
  }
}

describe('the Memory view (Chromium through archon serve)', () => {
  it('searches, reads with provenance to the run and step, edits, pins, makes global and local, and forgets (asking first), each kept in archon.db', async () => {
    const { page, dataDir } = await openApp((request) => {
      if (request.purpose === 'plan') return planReply([{ id: 'collect', description: 'collect the invoice numbers' }]);
      if (request.purpose === 'final') return { content: 'Invoices 10, 20 and 30.' };
      return { content: 'Invoice numbers are 10, 20 and 30.' };
    });
    await startGoal(page, 'Collect the invoices');
    await page.getByRole('dialog', { name: 'Approval: plan' }).getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('dialog', { name: 'Approval: final answer' }).getByRole('button', { name: 'Approve' }).click();
    await page.locator('.run-header .status-completed').waitFor();
    // The app dreams after a run in a run of its own: the goal's run is found by its goal.
    const runId = withStore(dataDir, (store) => store.runs.listRuns(10).find((run) => run.goal === 'Collect the invoices')?.id ?? '');
    const [fact, lesson, preference] = withStore(dataDir, (store) => [
      store.memory.add({ kind: 'fact', text: 'The invoices of March total 60 euros.', source: { runId, stepId: 'collect' } }),
      store.memory.add({ kind: 'lesson', text: 'Give the total, not only the amounts.', source: { runId, stepId: null }, evidence: [runId], appliesTo: 'sums' }),
      store.memory.add({ kind: 'preference', text: 'Answer in British English.' }),
    ]) as [MemoryItem, MemoryItem, MemoryItem];

    await page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: 'Memory' }).click();
    const list = page.getByRole('list', { name: 'Memories' });
    const entry = (item: MemoryItem) => list.getByRole('listitem', { name: `${item.kind} ${item.id}` });
    await entry(preference).waitFor();
    // The run left its own memories (its step's fact and its episode) beside the three written here.
    const stored = withStore(dataDir, (store) => store.memory.count());
    expect(stored).toBeGreaterThan(3);
    expect(await list.getByRole('listitem').count()).toBe(stored);
    await entry(fact).getByText('From run').waitFor();
    await entry(preference).getByText('Written by the operator').waitFor();
    await entry(preference).getByRole('button', { name: 'This workspace only' }).waitFor();
    expect(await page.getByRole('searchbox', { name: 'Search memory' }).getAttribute('placeholder')).toBe('Search memory');
    expect(await axeViolations(page)).toEqual([]);

    await page.getByRole('searchbox', { name: 'Search memory' }).fill('March');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await entry(lesson).waitFor({ state: 'detached' });
    expect(await list.getByRole('listitem').count()).toBe(1);
    await entry(fact).waitFor();

    await entry(fact).getByRole('button', { name: 'Pin' }).click();
    await entry(fact).getByRole('button', { name: 'Unpin' }).waitFor();
    expect(withStore(dataDir, (store) => store.memory.get(fact.id)?.pinned)).toBe(true);
    await entry(fact).getByRole('button', { name: 'Unpin' }).click();
    await entry(fact).getByRole('button', { name: 'Pin' }).waitFor();
    expect(withStore(dataDir, (store) => store.memory.get(fact.id)?.pinned)).toBe(false);

    // The run's fact is recalled in its workspace only; made global, by runs of every workspace.
    await entry(fact).getByRole('button', { name: 'Make global' }).click();
    await entry(fact).getByRole('button', { name: 'This workspace only' }).waitFor();
    await entry(fact).getByText('global', { exact: true }).waitFor();
    expect(withStore(dataDir, (store) => store.memory.get(fact.id)?.global)).toBe(true);
    await entry(fact).getByRole('button', { name: 'This workspace only' }).click();
    await entry(fact).getByRole('button', { name: 'Make global' }).waitFor();
    expect(withStore(dataDir, (store) => store.memory.get(fact.id)?.global)).toBe(false);

    await entry(fact).getByRole('button', { name: 'Edit' }).click();
    await entry(fact).getByRole('textbox', { name: 'Memory text' }).fill('The invoices of March total 60 euros, paid.');
    await entry(fact).getByRole('button', { name: 'Save' }).click();
    await entry(fact).getByText('The invoices of March total 60 euros, paid.').waitFor();
    expect(withStore(dataDir, (store) => store.memory.get(fact.id)?.text)).toBe('The invoices of March total 60 euros, paid.');

    await page.getByRole('searchbox', { name: 'Search memory' }).fill('');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await entry(lesson).waitFor();
    await entry(lesson).getByRole('button', { name: 'Forget' }).click();
    const confirm = entry(lesson).getByRole('group', { name: 'Confirm forgetting' });
    expect(withStore(dataDir, (store) => store.memory.get(lesson.id))).not.toBeNull();
    expect(await axeViolations(page)).toEqual([]);
    await confirm.getByRole('button', { name: 'Forget' }).click();
    await entry(lesson).waitFor({ state: 'detached' });
    expect(withStore(dataDir, (store) => store.memory.get(lesson.id))).toBeNull();
    expect(await list.getByRole('listitem').count()).toBe(stored - 1);

    // A memory forgotten elsewhere cannot be pinned: the error banner says so in the app's terms, the list leaves it out, and Dismiss closes the banner.
    withStore(dataDir, (store) => store.memory.forget(preference.id));
    await entry(preference).getByRole('button', { name: 'Pin' }).click();
    const banner = page.getByRole('alert').filter({ hasText: `Memory ${preference.id} was forgotten since` });
    await banner.waitFor();
    await entry(preference).waitFor({ state: 'detached' });
    expect(await banner.textContent()).not.toContain('archon');
    expect(await axeViolations(page)).toEqual([]);
    await banner.getByRole('button', { name: 'Dismiss' }).click();
    await banner.waitFor({ state: 'detached' });

    await entry(fact).getByRole('button', { name: 'step collect' }).click();
    await page.getByRole('region', { name: 'Step collect' }).waitFor();
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: 'Runs' }).getAttribute('aria-current')).toBe('page');
  });

  it("the step inspector leads with the step's trace, then folds the memories the step recalled, with where each came from, its relevance and its text (or that it was forgotten)", async () => {
    const { page, dataDir } = await openApp((request) => {
      if (request.purpose === 'plan') return planReply([{ id: 'collect', description: 'collect the March invoice numbers' }]);
      if (request.purpose === 'final') return { content: 'Invoices 10, 20 and 30.' };
      return { content: 'Invoice numbers are 10, 20 and 30.' };
    });
    const [fact, gone] = withStore(dataDir, (store) => [
      store.memory.add({ kind: 'preference', text: 'March invoice numbers are kept in the ledger.' }),
      store.memory.add({ kind: 'fact', text: 'March invoice numbers have five digits.' }),
    ]) as [MemoryItem, MemoryItem];
    await startGoal(page, 'Collect the March invoice numbers');
    await page.getByRole('dialog', { name: 'Approval: plan' }).getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('dialog', { name: 'Approval: final answer' }).getByRole('button', { name: 'Approve' }).click();
    await page.locator('.run-header .status-completed').waitFor();
    withStore(dataDir, (store) => store.memory.forget(gone.id));
    await page.locator('[data-step-id="collect"]').click({ position: { x: 20, y: 10 } });
    const inspector = page.getByRole('region', { name: 'Step collect' });
    const recalled = inspector.getByRole('region', { name: 'Recalled memories' });
    await recalled.getByText('Recalled memories (2)').waitFor();
    const traceFirst = await inspector.evaluate((region) => {
      const [trace, memories] = [region.querySelector('.trace'), region.querySelector('[aria-label="Recalled memories"]')];
      return trace !== null && memories !== null && (trace.compareDocumentPosition(memories) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0;
    });
    expect(traceFirst).toBe(true);
    expect(await recalled.getByText(fact.id).isVisible()).toBe(false);
    await recalled.getByText('Recalled memories (2)').click();
    await recalled.getByText(fact.id).waitFor();
    expect(await recalled.textContent()).toContain('relevance');
    expect(await recalled.textContent()).toContain('preference');
    expect(await recalled.textContent()).toContain('written by the operator');
    // Each item's text is read from memory now; one forgotten since the step recalled it says so.
    await recalled.getByRole('listitem').filter({ hasText: fact.id }).getByText('March invoice numbers are kept in the ledger.').waitFor();
    await recalled.getByRole('listitem').filter({ hasText: gone.id }).getByText('Forgotten since.').waitFor();
    expect(await axeViolations(page)).toEqual([]);
  });
});
