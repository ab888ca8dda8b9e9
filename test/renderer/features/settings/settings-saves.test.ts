import { describe, expect, it, vi } from 'vitest';
import { useServe } from '../../../support/archon-process';
import { useBrowser } from '../../../support/browser';
import { useTempDirs } from '../../../support/temp-dir';

// A browser and a host on a loaded 2-core machine running the whole suite: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });

const tempDir = useTempDirs();
const startServe = useServe();
const launchBrowser = useBrowser();

describe('Settings say whether a change was saved, in Chromium through archon serve', () => {
  it('says Saved after a change, says why and what to do when one is refused, and shows http_get off while network tools are', async () => {
    // Without --trust-ui and without a terminal to ask on, a change that widens what agents may do is refused.
    const serve = await startServe(tempDir(), ['--workspace', tempDir()]);
    const page = await (await launchBrowser()).newPage({ viewport: { width: 1024, height: 700 } });
    page.setDefaultTimeout(60_000);
    await page.goto(serve.url.href);
    await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: 'Settings' }).click();

    const httpGet = page.getByRole('table', { name: 'Built-in tools' }).getByRole('row', { name: /http_get/ });
    const httpGetOn = httpGet.getByRole('checkbox', { name: 'http_get enabled' });
    expect(await httpGetOn.isChecked()).toBe(false);
    expect(await httpGetOn.isDisabled()).toBe(true);
    expect(await httpGetOn.getAttribute('aria-describedby')).toBeTruthy();
    expect(await httpGet.textContent()).toContain('Off: network tools are off; turn them on above to use it.');
    expect(await page.getByRole('checkbox', { name: 'read_file enabled' }).isChecked()).toBe(true);

    const saved = page.getByRole('status').filter({ hasText: /^(Saving…|Saved\.|Not saved\.)/ });
    await page.getByLabel('Theme').selectOption('dark');
    await saved.filter({ hasText: /^Saved\.$/ }).waitFor();

    // A controlled box: it shows what is saved, so it stays unticked when the change is refused.
    await page.getByRole('checkbox', { name: /Network tools/ }).click();
    await saved.filter({ hasText: /^Not saved\. Not changed: network tools turned on widens what agents may do/ }).waitFor();
    expect(await httpGetOn.isDisabled()).toBe(true);
    // Tools are below the fold at this size: the status stays in view at the foot of the window.
    const box = await saved.boundingBox();
    expect(box && box.y >= 0 && box.y + box.height <= 700).toBe(true);
    await page.close();
  });
});
