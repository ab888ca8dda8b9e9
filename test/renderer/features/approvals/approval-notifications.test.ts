import { describe, expect, it, vi } from 'vitest';
import { planReply } from '../../../kit/scripted-model-server';
import { startGoal, useAppPage } from '../../../support/app-page';
import { lookAway, notificationsOf, watchNotifications } from '../../../support/page-notifications';

// A browser, a host and a run on a loaded 2-core machine: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });
const openApp = useAppPage();

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
    expect(await notificationsOf(page)).toEqual([]);

    await lookAway(page);
    await page.getByRole('dialog', { name: 'Approval: plan' }).getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('dialog', { name: 'Approval: final answer' }).waitFor();
    await expect
      .poll(() => notificationsOf(page))
      .toEqual([{ title: 'Archon: approval waiting (final answer)', body: expect.stringMatching(/^Run [0-9a-f]{8}: /) }]);
  });
});
