import type { Page } from 'playwright-core';
import { describe, expect, it, vi } from 'vitest';
import type { ApprovalDecision, ApprovalKind } from '../../../../src/shared/schemas/approval';
import type { CriterionOutcome, GoalContract } from '../../../../src/shared/schemas/goal-contract';
import type { RunStatus } from '../../../../src/shared/schemas/run';
import { axeViolations } from '../../../support/axe';
import { useServedApp } from '../../../support/served-app';

// A browser and a host on a loaded 2-core machine running the whole suite: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });

const openServedApp = useServedApp();

const CONTRACT: GoalContract = {
  goal: 'Write the sales report and state the total.',
  criteria: [
    { id: 'c1', kind: 'file_written', path: 'report.md', text: 'The report is written', source: 'goal' },
    { id: 'c2', kind: 'answer_mentions', value: '42', text: 'The answer states the total', source: 'goal' },
    { id: 'c3', kind: 'judged', text: 'The report reads clearly', source: 'model' },
  ],
  deliverables: ['report.md'],
  constraints: ['Only read sales.csv'],
  outOfScope: ['Charts'],
};
const OUTCOMES: CriterionOutcome[] = [
  { id: 'c1', met: true, evidence: ['write_file report.md (call w1)'], detail: null },
  { id: 'c2', met: false, evidence: ['final answer: "The report is done."'], detail: 'The answer does not mention 42.' },
  { id: 'c3', met: null, evidence: [], detail: 'No critic judged it.' },
];
const GAPS = ['The answer states the total'];

/** The app over real services, with a run whose contract is CONTRACT; an approval is asked as the gate asks it. */
async function openApp() {
  const app = await openServedApp();
  const createRun = (goal: string, status: RunStatus, answer?: string) => {
    const id = app.createRun(goal, status, { answer });
    app.runtime.events.append(id, 'contract.ready', { contract: CONTRACT, by: 'archon' });
    app.runtime.events.flush();
    return id;
  };
  const ask = (runId: string, kind: ApprovalKind, action: unknown): Promise<ApprovalDecision> => {
    const summary = `Decide the ${kind}`;
    const explanation = { summary, confidence: null, risk: { level: 'low' as const, factors: [] }, reversibility: 'not_applicable' as const, cost: { tokensUsed: 0, tokensLeft: null, estimatedUsd: 0 }, downstream: [], alternatives: [] };
    return app.ask(runId, { kind, stepId: null, summary, action, explanation });
  };
  return { ...app, createRun, ask };
}

/** The app showing the plan approval of a run that waits on it: two steps, read then write. */
async function askedPlan() {
  const app = await openApp();
  const runId = app.createRun('Write the sales report', 'awaiting_approval');
  await app.open();
  const steps = [{ id: 'read', description: 'read sales.csv', dependencies: [] }, { id: 'write', description: 'write report.md', dependencies: ['read'] }];
  const decided = app.ask(runId, 'plan', { steps });
  return { app, steps, decided, plan: app.page.getByRole('dialog', { name: 'Approval: plan' }) };
}

const listItems = (page: Page, scope: string, list: string) => page.getByRole('region', { name: scope }).getByRole('list', { name: list, exact: true }).getByRole('listitem');

describe('the goal contract and its outcome in the app, in Chromium', () => {
  it('shows a run that completed with gaps: its status in amber words, the accepted gaps under the answer, and what done meant with each criterion’s outcome', async () => {
    const app = await openApp();
    const runId = app.createRun('Write the sales report', 'completed_with_gaps', 'The report is done.');
    app.runtime.events.append(runId, 'outcome.checked', { criteria: OUTCOMES, verdict: 'fail', confidence: 0.8, gaps: GAPS, route: 'ask' });
    app.runtime.events.append(runId, 'run.completed', { answer: 'The report is done.', gaps: GAPS });
    app.runtime.events.flush();
    await app.open();

    const card = app.page.getByRole('list', { name: 'Run history' }).getByRole('button', { name: /^Write the sales report/ });
    const cardStatus = card.locator('.status');
    expect(await cardStatus.textContent()).toBe('completed with gaps');
    await card.click();
    const header = app.page.locator('.run-header .status');
    await header.filter({ hasText: 'completed with gaps' }).waitFor();
    // Amber like a warning, not the green of a clean completion.
    const colours = await header.evaluate((element) => {
      const style = getComputedStyle(element);
      const ok = getComputedStyle(document.documentElement).getPropertyValue('--ok').trim();
      return { background: style.backgroundColor, color: style.color, ok };
    });
    expect(colours.background).toBe('rgb(255, 241, 214)');
    expect(colours.ok).toBe('#166534');
    expect(colours.color).not.toBe('rgb(22, 101, 52)');

    expect(await app.page.getByRole('region', { name: 'Accepted gaps' }).getByRole('listitem').allInnerTexts()).toEqual(GAPS);
    const doneMeans = app.page.getByRole('region', { name: 'Done means' });
    await doneMeans.getByText(CONTRACT.goal).waitFor();
    const criteria = await listItems(app.page, 'Done means', 'Success criteria').evaluateAll((items) => items.filter((item) => item.parentElement?.getAttribute('aria-label') === 'Success criteria').map((item) => (item as HTMLElement).innerText.replace(/\s+/g, ' ').trim()));
    expect(criteria).toEqual([
      'met: The report is written file written: report.md write_file report.md (call w1)',
      'not met: The answer states the total answer mentions 42 final answer: "The report is done." The answer does not mention 42.',
      'not judged: The report reads clearly judged No critic judged it.',
    ]);
    expect(await doneMeans.getByRole('list', { name: 'Evidence for c1' }).getByRole('listitem').allInnerTexts()).toEqual(['write_file report.md (call w1)']);
    for (const text of ['Deliverables', 'report.md', 'Constraints', 'Only read sales.csv', 'Out of scope', 'Charts']) await doneMeans.getByText(text, { exact: true }).first().waitFor();
    expect(await axeViolations(app.page)).toEqual([]);
    await app.close();
  });

  it('shows the contract above the plan at its approval, and an edit sends the edited criteria with the steps', async () => {
    const { app, steps, decided, plan } = await askedPlan();
    const shown = plan.getByRole('region', { name: 'Done means' });
    await shown.getByText(CONTRACT.goal).waitFor();
    expect((await shown.getByRole('list', { name: 'Success criteria' }).getByRole('listitem').allInnerTexts()).map((text) => text.replace(/\s+/g, ' '))).toEqual([
      'The report is written file written: report.md',
      'The answer states the total answer mentions 42',
      'The report reads clearly judged',
    ]);
    await plan.getByRole('list', { name: 'Plan steps' }).getByText('write report.md').waitFor();

    await plan.getByRole('button', { name: 'Edit', exact: true }).click();
    await plan.getByRole('textbox', { name: 'Criterion c1' }).fill('The report is written to report.md');
    await plan.getByRole('button', { name: 'Remove criterion c2' }).click();
    await plan.getByLabel('New criterion').fill('Each figure cites its row');
    await plan.getByRole('button', { name: 'Add criterion' }).click();
    await plan.getByRole('textbox', { name: 'Criterion op-3' }).waitFor();
    await plan.getByText('The plan is a valid graph.').waitFor();
    expect(await axeViolations(app.page)).toEqual([]);
    await plan.getByRole('button', { name: 'Approve edited plan' }).click();

    expect(await decided).toEqual({
      verdict: 'edit',
      edited: {
        steps,
        contract: {
          ...CONTRACT,
          criteria: [
            { id: 'c1', kind: 'file_written', path: 'report.md', text: 'The report is written to report.md', source: 'operator' },
            { id: 'c3', kind: 'judged', text: 'The report reads clearly', source: 'model' },
            { id: 'op-3', kind: 'judged', text: 'Each figure cites its row', source: 'operator' },
          ],
        },
      },
    });
    await app.close();
  });

  it('sends no contract with an edited plan whose criteria the operator left alone', async () => {
    const { app, steps, decided, plan } = await askedPlan();
    await plan.getByRole('button', { name: 'Edit', exact: true }).click();
    await plan.getByRole('textbox', { name: 'Step 2 description' }).fill('write report.md with the total');
    await plan.getByLabel('New criterion').fill('Each figure cites its row');
    await plan.getByRole('button', { name: 'Add criterion' }).click();
    await plan.getByRole('button', { name: 'Remove criterion op-4' }).click();
    await plan.getByText('The plan is a valid graph.').waitFor();
    await plan.getByRole('button', { name: 'Approve edited plan' }).click();

    expect(await decided).toEqual({ verdict: 'edit', edited: { steps: [steps[0], { ...steps[1], description: 'write report.md with the total' }] } });
    await app.close();
  });

  it('asks about an outcome the check was only unsure of: no gaps, its doubt and confidence first, Approve gives the answer as it is', async () => {
    const app = await openApp();
    const runId = app.createRun('Write the sales report', 'awaiting_approval');
    await app.open();
    const unsure: CriterionOutcome[] = [
      { id: 'c1', met: true, evidence: ['write_file report.md (call w1)'], detail: null },
      { id: 'c2', met: true, evidence: ['final answer: "The total is 42."'], detail: null },
      { id: 'c3', met: null, evidence: [], detail: 'The critic was not sure.' },
    ];
    const first = app.ask(runId, 'outcome', { gaps: [], criteria: unsure, contract: CONTRACT, confidence: 0.8 });

    const dialog = app.page.getByRole('dialog', { name: 'Approval: outcome' });
    const lead = dialog.locator('.lead');
    await lead.getByText('The outcome check is not sure the goal is met').waitFor();
    expect((await lead.innerText()).replace(/\s+/g, ' ')).toBe('The outcome check is not sure the goal is met (critic confidence: 80%)');
    expect(await dialog.getByText('found gaps').count()).toBe(0);
    expect(await dialog.getByRole('list', { name: 'Gaps' }).count()).toBe(0);
    await dialog.getByRole('list', { name: 'Criteria outcomes' }).getByText('The critic was not sure.').waitFor();
    const hint = dialog.getByText('Approve gives the answer as it is; Reject ends the run failed.');
    await hint.waitFor();
    expect(await dialog.getByText('completed with gaps').count()).toBe(0);
    const approve = dialog.getByRole('button', { name: 'Approve', exact: true });
    expect(await approve.getAttribute('aria-describedby')).toBe(await hint.getAttribute('id'));
    expect(await axeViolations(app.page)).toEqual([]);
    await approve.click();
    expect(await first).toEqual({ verdict: 'approve' });
    await dialog.waitFor({ state: 'detached' });

    const second = app.ask(runId, 'outcome', { gaps: [], criteria: unsure, contract: CONTRACT, confidence: null });
    await lead.getByText('The outcome check is not sure the goal is met').waitFor();
    expect((await lead.innerText()).replace(/\s+/g, ' ')).toBe('The outcome check is not sure the goal is met (no readable verdict)');
    await dialog.getByRole('button', { name: 'Reject', exact: true }).click();
    await dialog.getByRole('button', { name: 'Send rejection' }).click();
    expect(await second).toEqual({ verdict: 'reject', feedback: 'Rejected by the operator.', stop: false });
    await app.close();
  });

  it('asks to accept the gaps the outcome check found: the gaps and each criterion’s outcome first, Approve accepts them', async () => {
    const app = await openApp();
    const runId = app.createRun('Write the sales report', 'awaiting_approval');
    await app.open();
    const decided = app.ask(runId, 'outcome', { gaps: GAPS, criteria: OUTCOMES, contract: CONTRACT, confidence: 0.8 });

    const dialog = app.page.getByRole('dialog', { name: 'Approval: outcome' });
    await dialog.getByText('The outcome check found gaps').waitFor();
    expect(await dialog.getByRole('list', { name: 'Gaps' }).getByRole('listitem').allInnerTexts()).toEqual(GAPS);
    const outcomes = dialog.getByRole('list', { name: 'Criteria outcomes' });
    for (const line of ['met:', 'not met:', 'not judged:']) await outcomes.getByText(line, { exact: true }).waitFor();
    await outcomes.getByText('The answer does not mention 42.').waitFor();
    await dialog.getByText('Critic confidence: 80%').waitFor();
    expect(await dialog.getByText('The exact action').count()).toBe(0);
    const approve = dialog.getByRole('button', { name: 'Approve', exact: true });
    expect(await approve.getAttribute('aria-describedby')).not.toBeNull();
    expect(await dialog.getByRole('button', { name: 'Approve' }).count()).toBe(1);
    await dialog.getByText('Approve accepts the gaps: the run ends completed with gaps.').waitFor();
    for (const name of ['Edit', 'Lock constraint']) expect(await dialog.getByRole('button', { name, exact: true }).count(), name).toBe(0);
    expect(await axeViolations(app.page)).toEqual([]);

    await approve.click();
    expect(await decided).toEqual({ verdict: 'approve' });
    await dialog.waitFor({ state: 'detached' });
    await app.close();
  });

  it('refuses the gaps with the operator’s feedback', async () => {
    const app = await openApp();
    const runId = app.createRun('Write the sales report', 'awaiting_approval');
    await app.open();
    const decided = app.ask(runId, 'outcome', { gaps: GAPS, criteria: OUTCOMES, contract: CONTRACT, confidence: null });
    const dialog = app.page.getByRole('dialog', { name: 'Approval: outcome' });
    await dialog.getByText('Critic confidence: no critic judged').waitFor();
    await dialog.getByRole('button', { name: 'Reject', exact: true }).click();
    await dialog.getByLabel('Feedback').fill('State the total, it is 42.');
    await dialog.getByRole('button', { name: 'Send rejection' }).click();
    expect(await decided).toEqual({ verdict: 'reject', feedback: 'State the total, it is 42.', stop: false });
    await app.close();
  });
});
