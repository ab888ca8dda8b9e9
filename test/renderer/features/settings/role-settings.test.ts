import type { Page } from 'playwright-core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ArchonStore } from '../../../../src/core/store/archon-store';
import { startModelServer, type ScriptedModelServer } from '../../../kit/scripted-model-server';
import { useServe } from '../../../support/archon-process';
import { axeViolations } from '../../../support/axe';
import { useBrowser } from '../../../support/browser';
import { useTempDirs } from '../../../support/temp-dir';

// A browser, a host and two model servers on a loaded 2-core machine running the whole suite: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });

const tempDir = useTempDirs();
const startServe = useServe();
const launchBrowser = useBrowser();
const servers: ScriptedModelServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function modelServer(models: string[]): Promise<ScriptedModelServer> {
  const server = await startModelServer({ reply: () => ({ content: 'unused' }), models });
  servers.push(server);
  return server;
}

async function openSettings(dataDir: string, flags: string[]) {
  const serve = await startServe(dataDir, ['--workspace', tempDir(), ...flags]);
  const context = await (await launchBrowser()).newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(60_000);
  await page.goto(serve.url.href);
  await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: 'Settings' }).click();
  return { page, close: () => context.close() };
}

const savedRoles = (dataDir: string) => {
  const store = ArchonStore.open(dataDir);
  try {
    return store.getSettings().roles;
  } finally {
    store.close();
  }
};
const role = (page: Page, name: string) => page.getByRole('region', { name: `Role ${name}` });
const probes = (server: ScriptedModelServer) => server.requests.length;

describe('roles in Settings, in Chromium through archon serve', () => {
  it('saves a role with its own server, model, chosen tools, prompt and concurrency, and Test probes that role’s server alone', async () => {
    const [large, small] = [await modelServer(['large-planner']), await modelServer(['small-coder'])];
    const dataDir = tempDir();
    const { page, close } = await openSettings(dataDir, ['--model-url', small.url, '--trust-ui']);

    const planner = role(page, 'planner');
    await planner.getByLabel('planner server URL').fill(large.url);
    await planner.getByLabel('planner model name').fill('large-planner');
    await planner.getByLabel('planner description').fill('plans and re-plans');
    await planner.getByRole('button', { name: 'Save role planner' }).click();
    await expect.poll(() => savedRoles(dataDir).planner).toEqual({ description: 'plans and re-plans', tools: 'all', model: { url: large.url, name: 'large-planner' } });

    const [largeBefore, smallBefore] = [probes(large), probes(small)];
    await role(page, 'planner').getByRole('button', { name: 'Test role planner' }).click();
    await role(page, 'planner').getByRole('status').filter({ hasText: `planner reached ${large.url}: models large-planner;` }).waitFor();
    expect(probes(large)).toBeGreaterThan(largeBefore);
    expect(probes(small)).toBe(smallBefore);

    await page.getByLabel('New role name').fill('coder');
    await page.getByRole('button', { name: 'Add role' }).click();
    const coder = role(page, 'coder');
    await coder.getByLabel('coder: all tools').uncheck();
    await coder.getByLabel('coder may use read_file').check();
    await coder.getByLabel('coder may use write_file').check();
    await coder.getByLabel('coder system prompt addition').fill('Write small diffs.');
    await coder.getByLabel('coder max concurrency').fill('0');
    expect(await coder.getByRole('button', { name: 'Save role coder' }).isDisabled()).toBe(true);
    await coder.getByLabel('coder max concurrency').fill('2');
    await coder.getByRole('button', { name: 'Save role coder' }).click();
    await expect.poll(() => savedRoles(dataDir).coder).toEqual({ description: '', tools: ['read_file', 'write_file'], systemPrompt: 'Write small diffs.', maxConcurrency: 2 });
    // Without a server of its own, Test probes the run's model server.
    await role(page, 'coder').getByRole('button', { name: 'Test role coder' }).click();
    await role(page, 'coder').getByRole('status').filter({ hasText: `coder reached ${small.url}: models small-coder;` }).waitFor();
    expect(await axeViolations(page)).toEqual([]);

    await role(page, 'coder').getByRole('button', { name: 'Remove role coder' }).click();
    await expect.poll(() => Object.keys(savedRoles(dataDir))).toEqual(['planner']);
    await close();
  });

  it('refuses, from the page alone, a role that would widen what agents may do: a new server, more tools', async () => {
    const server = await modelServer(['other']);
    const dataDir = tempDir();
    const store = ArchonStore.open(dataDir);
    store.updateSettings({ roles: { coder: { description: '', tools: ['read_file'] } } });
    store.close();
    const { page, close } = await openSettings(dataDir, []);
    const coder = role(page, 'coder');
    await coder.getByLabel('coder may use write_file').check();
    await coder.getByLabel('coder server URL').fill(server.url);
    await coder.getByRole('button', { name: 'Save role coder' }).click();
    await page.getByRole('alert').filter({ hasText: /Not changed: the role coder given the tools write_file.*the role coder pointed at another model server/ }).waitFor();
    expect(savedRoles(dataDir)).toEqual({ coder: { description: '', tools: ['read_file'] } });
    await close();
  });
});
