// Regenerates the README's screenshots: `npm run screenshots`. Starts the scripted model server and
// `archon serve` on a throwaway data dir, runs a small goal, and photographs the main screens in
// Debian's Chromium: the live plan graph with an approval waiting, the finished run, Audit, Settings.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { planReply, startModelServer, stepIdOf } from '../test/kit/scripted-model-server';

const root = fileURLToPath(new URL('..', import.meta.url));
const outDir = join(root, 'docs', 'screenshots');
const dataDir = mkdtempSync(join(tmpdir(), 'archon-screens-'));
const workspace = mkdtempSync(join(tmpdir(), 'archon-screens-ws-'));
const model = await startModelServer({
  latencyMs: 300,
  reply: (request) => {
    if (request.purpose === 'plan') {
      return planReply([
        { id: 'survey', description: 'List the files of the project' },
        { id: 'prices', description: 'Compute the total price with tax', tool: 'calculator', args: { expression: '(19.99 + 5.01) * 1.2' } },
        { id: 'notes', description: 'Write the summary to notes.md', dependencies: ['survey', 'prices'] },
      ]);
    }
    if (request.purpose === 'final') return { content: 'The project has two files; the total with tax is 30; the summary is in notes.md.' };
    const id = stepIdOf(request);
    const replied = request.body.messages?.some((message) => message.role === 'tool');
    if (id === 'notes' && !replied) return { toolCalls: [{ name: 'write_file', arguments: { path: 'notes.md', content: '# Summary\nTotal with tax: 30\n' } }] };
    return { content: `Done: ${id}` };
  },
});
const server = spawn(process.execPath, [join(root, 'bin', 'archon.mjs'), 'serve', '--port', '0', '--data-dir', dataDir, '--model-url', model.url, '--workspace', workspace], { stdio: ['ignore', 'pipe', 'inherit'] });

try {
  const url = (await new Promise<string>((resolve) => createInterface({ input: server.stdout }).once('line', resolve))).replace(/^Archon UI: /, '');
  const browser = await chromium.launch({
    executablePath: process.env.ARCHON_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const page = await browser.newPage({ viewport: { width: 1440, height: 860 }, colorScheme: 'dark' });
  await page.goto(url);
  await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
  mkdirSync(outDir, { recursive: true });
  const shoot = async (name: string) => {
    await page.screenshot({ path: join(outDir, `${name}.png`) });
    process.stdout.write(`wrote docs/screenshots/${name}.png\n`);
  };
  await page.getByLabel('Goal').fill('Summarise the project and its prices into notes.md');
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  await page.getByRole('dialog', { name: 'Approval: plan' }).getByRole('button', { name: 'Approve' }).click();
  const toolDialog = page.getByRole('dialog', { name: 'Approval: tool call' });
  await toolDialog.waitFor();
  await shoot('approval');
  await toolDialog.getByRole('button', { name: 'Approve' }).click();
  await page.getByRole('dialog', { name: 'Approval: final answer' }).getByRole('button', { name: 'Approve' }).click();
  await page.getByLabel('Answer', { exact: true }).waitFor();
  await page.locator('[data-step-id="prices"]').click();
  await shoot('runs');
  for (const screen of ['Audit', 'Settings']) {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: screen }).click();
    await page.getByRole('heading', { name: screen, exact: true, level: 1 }).waitFor();
    await shoot(screen.toLowerCase());
  }
  await browser.close();
} finally {
  server.kill('SIGTERM');
  await model.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
}
