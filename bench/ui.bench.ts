import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { line } from './support';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Frames per second while panning and zooming the synthetic 500-node DAG in headless Chromium. */
export async function uiBenchmarks(): Promise<void> {
  process.stdout.write('\n## Desktop UI (issue #7)\n');
  const dataDir = mkdtempSync(join(tmpdir(), 'archon-bench-ui-'));
  const server = spawn(process.execPath, [join(ROOT, 'bin', 'archon.mjs'), 'serve', '--port', '0', '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const browser = await chromium.launch({
    executablePath: process.env.ARCHON_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  try {
    const url = (await new Promise<string>((resolve) => createInterface({ input: server.stdout }).once('line', resolve))).replace(/^Archon UI: /, '');
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`${url}&perf-dag=500`);
    await page.locator('[data-step-id="n499"]').waitFor({ state: 'attached' });
    // A string, not a function: the TypeScript runner would otherwise inject helpers the page lacks.
    await page.evaluate(`(() => {
      const state = { frames: 0, running: true };
      window.frameCounter = state;
      const tick = () => { state.frames++; if (state.running) requestAnimationFrame(tick); };
      requestAnimationFrame(tick);
    })()`);
    const started = Date.now();
    await page.mouse.move(700, 450);
    for (let step = 0; step < 60; step++) {
      await page.mouse.wheel(0, step % 20 < 10 ? -120 : 120);
      await page.mouse.down();
      await page.mouse.move(700 + ((step % 10) - 5) * 20, 450 + ((step % 6) - 3) * 15, { steps: 4 });
      await page.mouse.up();
    }
    const seconds = (Date.now() - started) / 1000;
    const frames = await page.evaluate<number>('(() => { window.frameCounter.running = false; return window.frameCounter.frames; })()');
    line('pan and zoom at 500 nodes, headless Chromium', `${(frames / seconds).toFixed(1)} fps`, '≥ 30 here; ≥ 55 on a desktop GPU');
  } finally {
    await browser.close();
    server.kill('SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
  }
}
