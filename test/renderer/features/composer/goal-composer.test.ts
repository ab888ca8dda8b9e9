import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it, vi } from 'vitest';
import { ArchonStore } from '../../../../src/core/store/archon-store';
import { planReply } from '../../../kit/scripted-model-server';
import { useModelServers } from '../../../support/model-servers';
import { runArchon, useServe, type ServeProcess } from '../../../support/archon-process';
import { useBrowser } from '../../../support/browser';
import { freePorts } from '../../../support/restate';
import { useTempDirs } from '../../../support/temp-dir';

// A browser, a host and a run on a loaded 2-core machine running the whole suite: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });

const tempDir = useTempDirs();
const startServe = useServe();
const launchBrowser = useBrowser();
const startServer = useModelServers();

/** The app through `serve` in Chromium at 1400×900, connected. */
async function openPage(serve: ServeProcess): Promise<Page> {
  const page = await (await launchBrowser()).newPage({ viewport: { width: 1400, height: 900 } });
  page.setDefaultTimeout(60_000);
  await page.goto(serve.url.href);
  await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
  return page;
}

describe('the goal composer in Chromium through archon serve', () => {
  it('shows what the probe found: mode, streaming, context length and its source, parallel slots, and why', async () => {
    const server = await startServer({
      reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'only', description: 'one step' }]) : { content: 'ok' }),
      refuse: 'llamacpp-no-tools-stream',
      llamaCpp: { contextLength: 8192, slots: 3 },
    });
    const serve = await startServe(tempDir(), ['--model-url', server.url, '--workspace', tempDir()]);
    const page = await openPage(serve);
    await page.getByLabel('Goal').fill('Say ok');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const probe = page.getByRole('status').filter({ hasText: 'scripted-model at' });
    await probe.waitFor();
    const text = await probe.textContent();
    expect(text).toContain('native tool calls, sent whole (not streamed); context 8192 tokens (llama.cpp /props n_ctx); parallel slots 3.');
    expect(text).toContain('Why: this llama.cpp cannot stream with tools ("Cannot use tools with stream"); requests are sent whole.');
    await page.close();
  });

  it('keeps Run disabled until the host has said its default model server, then runs against it', async () => {
    const server = await startServer({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'only', description: 'one step' }]) : { content: 'ok' }) });
    const serve = await startServe(tempDir(), ['--model-url', server.url, '--workspace', tempDir()]);
    const page = await (await launchBrowser()).newPage({ viewport: { width: 1400, height: 900 } });
    page.setDefaultTimeout(60_000);
    // The host's answer to app.info is held back, as a loaded machine may: the connection is up, the defaults are not.
    const held: (() => void)[] = [];
    await page.routeWebSocket(/\/ws/, (socket) => {
      const host = socket.connectToServer();
      const infoIds = new Set<number>();
      socket.onMessage((message) => {
        const frame = JSON.parse(String(message)) as { id: number; command: string };
        if (frame.command === 'app.info') infoIds.add(frame.id);
        host.send(message);
      });
      host.onMessage((message) => {
        const frame = JSON.parse(String(message)) as { id?: number };
        if (frame.id !== undefined && infoIds.has(frame.id)) held.push(() => socket.send(message));
        else socket.send(message);
      });
    });
    await page.goto(serve.url.href);
    await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
    await page.getByLabel('Goal').fill('Say ok');
    const run = page.getByRole('button', { name: 'Run', exact: true });
    await expect.poll(() => held.length).toBe(1);
    expect(await run.isDisabled()).toBe(true);
    for (const release of held.splice(0)) release();
    await run.click();
    await page.getByRole('status').filter({ hasText: 'scripted-model at' }).waitFor();
    await page.getByRole('dialog', { name: 'Approval: plan' }).waitFor();
    await page.close();
  });

  it('says why a run could not start (the cluster in Settings out of reach), keeps the goal to run again, and starts nothing', async () => {
    const server = await startServer({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'only', description: 'one step' }]) : { content: 'ok' }) });
    const dataDir = tempDir();
    const [closedPort] = await freePorts(1);
    const nowhere = `http://127.0.0.1:${closedPort}`;
    const store = ArchonStore.open(dataDir);
    try {
      store.updateSettings({ cluster: { ingress: nowhere, admin: nowhere, secretFile: join(tempDir(), 'cluster-secret') } });
    } finally {
      store.close();
    }
    const serve = await startServe(dataDir, ['--model-url', server.url, '--workspace', tempDir()]);
    const page = await openPage(serve);
    await page.getByLabel('Goal').fill('Say ok');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const refusal = page.locator('.error-banner[role="alert"]');
    await refusal.waitFor();
    expect(await refusal.locator('span').textContent()).toBe(`No Restate server answers at ${nowhere}/health. Start one (npx restate-server), or set the address of yours in Settings → Engine.`);
    expect(await page.getByLabel('Goal').inputValue()).toBe('Say ok');
    expect(await page.getByRole('button', { name: 'Run', exact: true }).isDisabled()).toBe(false);
    expect(runArchon(['runs', '--json', '--data-dir', dataDir]).stdout.trim()).toBe('');
    await page.close();
  });
});
