import type { Browser, Page } from 'playwright-core';
import type { ServeProcess } from './archon-process';

/**
 * An init script: records every Notification the page constructs, and lets the test say whether the
 * page has focus (headless Chromium reports its page focused, so "the operator looked away" is set here).
 */
export function watchNotifications(): void {
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

/** The notifications the page has shown so far. */
export function notificationsOf(page: Page): Promise<{ title: string; body: string }[]> {
  return page.evaluate(() => (window as unknown as { __notifications: { title: string; body: string }[] }).__notifications);
}

/** The operator looks away: the page no longer has focus. */
export async function lookAway(page: Page): Promise<void> {
  await page.evaluate(() => {
    (window as unknown as { __focused: boolean }).__focused = false;
  });
}

/** The app through `serve` in a new page at 1024×700, connected, its notifications allowed and watched. */
export async function openWatchedPage(browser: Browser, serve: ServeProcess): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1024, height: 700 } });
  await context.grantPermissions(['notifications'], { origin: serve.origin });
  await context.addInitScript(watchNotifications);
  const page = await context.newPage();
  page.setDefaultTimeout(60_000);
  await page.goto(serve.url.href);
  await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
  return page;
}
