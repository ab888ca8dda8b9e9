#!/usr/bin/env node
// Regenerates the README's screenshots: `npm run screenshots` (after `npm run build`).
// Starts `archon serve` on a throwaway data dir and photographs each main screen in Debian's Chromium.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = fileURLToPath(new URL('..', import.meta.url));
const outDir = join(root, 'docs', 'screenshots');
const dataDir = mkdtempSync(join(tmpdir(), 'archon-screens-'));
const server = spawn(process.execPath, [join(root, 'bin', 'archon.mjs'), 'serve', '--port', '0', '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'inherit'] });

try {
  const firstLine = await new Promise((resolve, reject) => {
    createInterface({ input: server.stdout }).once('line', resolve);
    server.once('exit', (code) => reject(new Error(`archon serve exited with ${code}`)));
  });
  const url = firstLine.replace(/^Archon UI: /, '');
  const browser = await chromium.launch({
    executablePath: process.env.ARCHON_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 }, colorScheme: 'dark' });
  await page.goto(url);
  await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
  mkdirSync(outDir, { recursive: true });
  for (const screen of ['Runs', 'Audit', 'Settings']) {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: screen }).click();
    await page.getByRole('heading', { name: screen }).waitFor();
    await page.screenshot({ path: join(outDir, `${screen.toLowerCase()}.png`) });
    console.log(`wrote docs/screenshots/${screen.toLowerCase()}.png`);
  }
  await browser.close();
} finally {
  server.kill('SIGTERM');
  rmSync(dataDir, { recursive: true, force: true });
}
