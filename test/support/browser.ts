import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll } from 'vitest';

/** Debian's Chromium, as installed by .ci/run; Playwright never downloads a browser here. */
export const CHROMIUM_PATH = process.env.ARCHON_CHROMIUM ?? '/usr/bin/chromium';

const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];

/** One headless Chromium (with a fresh profile Playwright makes) per test file, closed after it. */
export function useBrowser(): () => Promise<Browser> {
  let browser: Browser | undefined;
  afterAll(async () => {
    await browser?.close();
  });
  return async () => {
    if (!existsSync(CHROMIUM_PATH)) throw new Error(`No Chromium at ${CHROMIUM_PATH}: run \`apt-get install -y chromium\` (bash .ci/run does) or set ARCHON_CHROMIUM.`);
    browser ??= await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: FLAGS });
    return browser;
  };
}
