import { describe, expect, it, vi } from 'vitest';
import { planReply } from '../../../kit/scripted-model-server';
import { startGoal, useAppPage } from '../../../support/app-page';

// A browser, a host and a run on a loaded 2-core machine: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });
const openApp = useAppPage();

/**
 * Records every Notification the page constructs, and lets the test say whether the page has focus:
 * headless Chromium reports its page focused, so "the operator looked away" is set here.
 */
function watchNotifications() {
  const seen: { title: string; body: string }[] = [];
  const scope = window as unknown as { __notifications: typeof seen; __focused: boolean };
  scope.__notifications = seen;
  scope.__focused = true;
  const Original = window.Notification;
  window.Notification = class extends Original {
    constructor(title: string, options?: NotificationOptions) {
      super(title, options);
      seen.push({ title, body: options?.body ?? '' });
    }
  } as typeof Notification;
  document.hasFocus = () => scope.__focused;
}

describe('desktop notifications in archon serve', () => {
  it('notifies when an approval waits and the page is not focused, and not while it is', async () => {
    const { page, serve } = await openApp(
      (request) => {
        if (request.purpose === 'plan') return planReply([{ id: 'only', description: 'one step' }]);
        if (request.purpose === 'final') return { content: 'All done.' };
        return { content: 'done' };
      },
      { initScript: watchNotifications },
    );
    await page.context().grantPermissions(['notifications'], { origin: serve.origin });
    await startGoal(page, 'Notify me');
    await page.getByRole('dialog', { name: 'Approval: plan' }).waitFor();
    expect(await page.evaluate(() => (window as unknown as { __notifications: unknown[] }).__notifications)).toEqual([]);

    await page.evaluate(() => {
      (window as unknown as { __focused: boolean }).__focused = false;
    });
    await page.getByRole('dialog', { name: 'Approval: plan' }).getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('dialog', { name: 'Approval: final answer' }).waitFor();
    await expect
      .poll(() => page.evaluate(() => (window as unknown as { __notifications: { title: string; body: string }[] }).__notifications))
      .toEqual([{ title: 'Archon: approval waiting (final answer)', body: expect.stringMatching(/^Run [0-9a-f]{8}: /) }]);
  });
});
