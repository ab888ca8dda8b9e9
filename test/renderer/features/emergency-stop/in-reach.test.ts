import { describe, expect, it, vi } from 'vitest';
import { planReply, stepIdOf, type RecordedRequest, type ScriptedReply } from '../../../kit/scripted-model-server';
import { startGoal, useAppPage } from '../../../support/app-page';
import { axeViolations } from '../../../support/axe';

// A browser, a host and a run on a loaded 2-core machine: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });
const openApp = useAppPage();

/** Step "write" asks to write a file (an approval); step "think" hangs, so it is running while the dialog is open. */
function writeAndThink(request: RecordedRequest): ScriptedReply {
  if (request.purpose === 'plan') return planReply([{ id: 'write', description: 'write a note' }, { id: 'think', description: 'think hard' }]);
  if (stepIdOf(request) === 'think') return { hang: true };
  return { toolCalls: [{ name: 'write_file', arguments: { path: 'note.txt', content: 'hello' } }] };
}

describe('the Emergency stop stays in reach', () => {
  it('a mouse click on Emergency stop with an approval dialog open stops the run; the dialog shows the step trace', async () => {
    const { page } = await openApp(writeAndThink);
    await startGoal(page, 'Write and think');
    await page.getByRole('dialog', { name: 'Approval: plan' }).getByRole('button', { name: 'Approve' }).click();
    const dialog = page.getByRole('dialog', { name: 'Approval: tool call' });
    await page.locator('[data-status="running"]').first().waitFor();

    await dialog.getByText('Show step trace').click();
    await dialog.getByRole('listitem').filter({ hasText: '? tool_call' }).waitFor();
    expect(await axeViolations(page)).toEqual([]);

    // A real pointer click: Playwright refuses it if anything (the backdrop) covers the button.
    await page.getByRole('button', { name: 'Emergency stop' }).click();
    await page.locator('[data-status="stopped"]').nth(1).waitFor();
    expect(await page.locator('[data-status="running"], [data-status="awaiting_approval"]').count()).toBe(0);
    await page.getByRole('button', { name: 'Re-arm', exact: true }).waitFor();
  });

  it('a stop the page cannot deliver says so loudly and names archon estop and Ctrl+C', async () => {
    const { page, serve } = await openApp(() => ({ content: 'unused' }));
    await new Promise<void>((resolve) => {
      serve.child.once('exit', () => resolve());
      serve.child.kill('SIGTERM');
    });
    await page.getByRole('status').filter({ hasText: /Disconnected|Connecting/ }).waitFor();
    await page.getByRole('button', { name: 'Emergency stop' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'The emergency stop was NOT delivered' });
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/archon estop.*Ctrl\+C/s);
    // Over Audit, a screen that does not change while disconnected: the alert reads well in either theme.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: 'Audit' }).click();
    await page.getByRole('heading', { name: 'Audit', level: 1 }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.emulateMedia({ colorScheme: 'dark' });
    await expect.poll(() => page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    expect(await axeViolations(page)).toEqual([]);
  });
});
