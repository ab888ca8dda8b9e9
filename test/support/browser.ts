import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll } from 'vitest';

/** The Chromium scripts/provision-test-tools.mjs finds: ARCHON_CHROMIUM, else `chromium` on PATH (Debian's), else Playwright's download. */
export const CHROMIUM_PATH =
  process.env.ARCHON_CHROMIUM ??
  (process.env.PATH ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, 'chromium')).find((path) => existsSync(path)) ??
  chromium.executablePath();

const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];

/** One headless Chromium (with a fresh profile Playwright makes) per test file, closed after it. */
export function useBrowser(): () => Promise<Browser> {
  let browser: Browser | undefined;
  afterAll(async () => {
    await browser?.close();
  });
  return async () => {
    if (!existsSync(CHROMIUM_PATH)) throw new Error(`No Chromium at ${CHROMIUM_PATH}: run \`npm test\` (it provisions one), \`apt-get install -y chromium\`, or set ARCHON_CHROMIUM.`);
    browser ??= await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: FLAGS });
    return browser;
  };
}
