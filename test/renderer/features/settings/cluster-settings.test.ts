import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { ArchonStore } from '../../../../src/core/store/archon-store';
import type { Settings } from '../../../../src/shared/schemas/settings';
import { clusterSecretFile } from '../../../kit/restate-cluster';
import { useServe } from '../../../support/archon-process';
import { axeViolations } from '../../../support/axe';
import { useBrowser } from '../../../support/browser';
import { useTempDirs } from '../../../support/temp-dir';

// A browser and a host on a loaded 2-core machine running the whole suite: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });

const tempDir = useTempDirs();
const startServe = useServe();
const launchBrowser = useBrowser();

function clusterOf(dataDir: string): Settings['cluster'] {
  const store = ArchonStore.open(dataDir);
  try {
    return store.getSettings().cluster;
  } finally {
    store.close();
  }
}

async function openSettings(dataDir: string, args: string[]) {
  const serve = await startServe(dataDir, ['--workspace', tempDir(), ...args]);
  const page = await (await launchBrowser()).newPage({ viewport: { width: 1024, height: 700 } });
  page.setDefaultTimeout(60_000);
  await page.goto(serve.url.href);
  await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: 'Settings' }).click();
  const engine = page.getByRole('group', { name: 'Engine' });
  const saved = page.getByRole('status').filter({ hasText: /^(Saving…|Saved\.|Not saved\.)/ });
  return { page, engine, saved };
}

describe('the engine in Settings, in Chromium through archon serve', () => {
  it('sends runs\' tool calls to a Restate cluster once its secret file reads, only on the operator\'s word, and back to this machine', async () => {
    const secret = clusterSecretFile();
    try {
      const dataDir = tempDir();
      const { page, engine, saved } = await openSettings(dataDir, ['--trust-ui']);
      await engine.getByText(/run their tool calls in this machine's tool processes/).waitFor();
      const use = engine.getByRole('button', { name: 'Use the Restate cluster' });
      expect(await use.isDisabled()).toBe(true);

      await engine.getByLabel('Cluster secret file').fill(join(tempDir(), 'no-such-secret'));
      await use.click();
      await saved.filter({ hasText: /^Not saved\..*cluster secret/i }).waitFor();
      expect(clusterOf(dataDir)).toBeNull();

      await engine.getByLabel('Restate ingress').fill('http://desk.lan:8080');
      await engine.getByLabel('Cluster secret file').fill(secret.file);
      await use.click();
      await saved.filter({ hasText: /^Saved\.$/ }).waitFor();
      await engine.getByText(/send their built-in tool calls to the workers of the Restate cluster at http:\/\/desk\.lan:8080/).waitFor();
      expect(clusterOf(dataDir)).toEqual({ ingress: 'http://desk.lan:8080', admin: 'http://127.0.0.1:9070', secretFile: secret.file });
      expect(await axeViolations(page)).toEqual([]);

      await engine.getByRole('button', { name: 'Use this machine' }).click();
      await engine.getByText(/run their tool calls in this machine's tool processes/).waitFor();
      expect(clusterOf(dataDir)).toBeNull();
      await page.close();
    } finally {
      secret.remove();
    }
  });

  it('refuses the change as one that widens what agents may do when the page is not trusted to', async () => {
    const secret = clusterSecretFile();
    try {
      const dataDir = tempDir();
      const { page, engine, saved } = await openSettings(dataDir, []);
      await engine.getByLabel('Cluster secret file').fill(secret.file);
      await engine.getByRole('button', { name: 'Use the Restate cluster' }).click();
      await saved.filter({ hasText: /^Not saved\. Not changed: built-in tool calls sent to the workers of the Restate cluster at http:\/\/127\.0\.0\.1:8080 widens what agents may do/ }).waitFor();
      expect(clusterOf(dataDir)).toBeNull();
      await page.close();
    } finally {
      secret.remove();
    }
  });
});
