import type { BrowserContextOptions, Page } from 'playwright-core';
import { afterEach } from 'vitest';
import { startModelServer, type ModelServerOptions, type ScriptedModelServer } from '../kit/scripted-model-server';
import { useServe, type ServeProcess } from './archon-process';
import { useBrowser } from './browser';
import { useTempDirs } from './temp-dir';

export interface AppPage {
  page: Page;
  serve: ServeProcess;
  server: ScriptedModelServer;
  dataDir: string;
}

/** The app in Chromium through `archon serve` against a scripted model server; all of it closed after each test. */
export function useAppPage(): (reply: ModelServerOptions['reply'], context?: BrowserContextOptions & { initScript?: () => void }) => Promise<AppPage> {
  const tempDir = useTempDirs();
  const startServe = useServe();
  const launchBrowser = useBrowser();
  let server: ScriptedModelServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  return async (reply, { initScript, ...options } = {}) => {
    server = await startModelServer({ reply });
    const dataDir = tempDir();
    const serve = await startServe(dataDir, ['--model-url', server.url, '--workspace', tempDir()]);
    const browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...options });
    if (initScript) await context.addInitScript(initScript);
    const page = await context.newPage();
    // These tests assert order and outcome; the waits are only long enough for a loaded 2-core machine running the whole suite.
    page.setDefaultTimeout(60_000);
    await page.goto(serve.url.href);
    await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
    return { page, serve, server, dataDir };
  };
}

export async function startGoal(page: Page, goal: string): Promise<void> {
  await page.getByLabel('Goal').fill(goal);
  await page.getByRole('button', { name: 'Run', exact: true }).click();
}
