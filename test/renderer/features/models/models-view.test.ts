import { existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Page } from 'playwright-core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ArchonStore } from '../../../../src/core/store/archon-store';
import { MODEL_CATALOG_ENV } from '../../../../src/core/models/model-catalog';
import { MODEL_PRESETS } from '../../../../src/shared/model-presets';
import type { Settings } from '../../../../src/shared/schemas/settings';
import { ENDED_RUN_STATUSES, type RunStatus } from '../../../../src/shared/schemas/run';
import { useServe } from '../../../support/archon-process';
import { axeViolations } from '../../../support/axe';
import { useAppPage, startGoal } from '../../../support/app-page';
import { useBrowser } from '../../../support/browser';
import { ggufBytes, startModelFileServer, type ModelFileServer } from '../../../support/model-file-server';
import { useTempDirs } from '../../../support/temp-dir';
import { writeTinyModel } from '../../../kit/tiny-gguf';

// A browser, a host and a download on a loaded 2-core machine: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });
const openApp = useAppPage();
const startServe = useServe();
const launchBrowser = useBrowser();
const tempDir = useTempDirs();

const SIZE = 256 * 1024;
const STALL = 64 * 1024;
const TITLE = 'Tiny 1B Instruct (test)';

let files: ModelFileServer | undefined;
beforeEach(async () => {
  files = await startModelFileServer(ggufBytes(SIZE));
  // A catalogue of the operator's own, as a mirror would serve it: `archon serve` offers it instead of the built-in one.
  const catalog = join(tempDir(), 'catalog.json');
  writeFileSync(catalog, JSON.stringify([{ name: 'tiny-1b', title: TITLE, licence: 'MIT', url: files.url, sizeBytes: SIZE, sha256: files.sha256, memoryBytes: 1_000_000 }]));
  vi.stubEnv(MODEL_CATALOG_ENV, catalog);
});
afterEach(async () => {
  vi.unstubAllEnvs();
  await files?.close();
});

/** The status of the goal's run (not a sub-agent's, nor a dream) once it has ended, else null. */
function endedRun(dataDir: string): string | null {
  if (!existsSync(join(dataDir, 'archon.db'))) return null;
  const db = new Database(join(dataDir, 'archon.db'), { readonly: true });
  try {
    const runs = db.prepare("SELECT status, options_json AS options FROM runs WHERE kind = 'goal'").all() as { status: string; options: string }[];
    const run = runs.find((candidate) => !(JSON.parse(candidate.options) as { parentRunId?: string }).parentRunId);
    return run && ENDED_RUN_STATUSES.has(run.status as RunStatus) ? run.status : null;
  } finally {
    db.close();
  }
}

function settingsOf(dataDir: string): Settings {
  const store = ArchonStore.open(dataDir);
  try {
    return store.getSettings();
  } finally {
    store.close();
  }
}

/** Answers the approval dialog on screen, if any: an escalation is ended, anything else approved. */
async function answerApproval(page: Page): Promise<void> {
  const dialog = page.getByRole('dialog', { name: /^Approval:/ });
  if (!(await dialog.isVisible())) return;
  const escalation = (await dialog.getByText('Approval: escalation', { exact: true }).count()) > 0;
  await dialog.getByRole('button', { name: escalation ? 'End run' : 'Approve' }).click({ timeout: 10_000 });
}

const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name });

/** The app in Chromium, at 1024×700, through `archon serve` on `dataDir`. */
async function openServe(dataDir: string, args: string[]): Promise<Page> {
  const serve = await startServe(dataDir, ['--workspace', tempDir(), ...args]);
  const context = await (await launchBrowser()).newContext({ viewport: { width: 1024, height: 700 } });
  const page = await context.newPage();
  page.setDefaultTimeout(60_000);
  await page.goto(serve.url.href);
  await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
  return page;
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('the Models view (Chromium through archon serve)', () => {
  it('lists the catalogue, downloads with progress, cancels, resumes to installed, uses, removes (asking first) and adds a local file', async () => {
    const dataDir = tempDir();
    // Another model server for every run widens what agents may do: the terminal, or --trust-ui, confirms it.
    const page = await openServe(dataDir, ['--trust-ui', '--model-url', `http://127.0.0.1:${await closedPort()}/v1`]);
    await nav(page, 'Models').click();
    await page.getByRole('heading', { name: 'Models', level: 1 }).waitFor();
    const model = page.getByRole('list', { name: 'Models' }).getByRole('listitem', { name: TITLE });
    await model.getByText('Not installed').waitFor();
    await model.getByText('262 KB · needs 1.0 MB of memory · MIT').waitFor();
    expect(await axeViolations(page)).toEqual([]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth)).toBe(true);

    // The first answer stalls a quarter of the way: the bar shows it, polled from models.list.
    files?.answers.push({ stallAfter: STALL });
    await model.getByRole('button', { name: `Download ${TITLE}` }).click();
    const bar = model.getByRole('progressbar', { name: `Downloading ${TITLE}` });
    await expect.poll(() => bar.getAttribute('aria-valuenow'), { timeout: 30_000 }).toBe('25');
    expect([await bar.getAttribute('aria-valuemin'), await bar.getAttribute('aria-valuemax')]).toEqual(['0', '100']);
    await model.getByText('Downloading').waitFor();
    expect(await model.getByRole('button', { name: `Download ${TITLE}` }).count()).toBe(0);
    expect(await axeViolations(page)).toEqual([]);

    await model.getByRole('button', { name: `Cancel download of ${TITLE}` }).click();
    await model.getByText(/Partly downloaded \(66 KB\)/).waitFor();
    await model.getByRole('button', { name: `Download ${TITLE}` }).click();
    await model.getByText('Installed', { exact: true }).waitFor();
    expect(files?.requests.at(-1)?.range).toBe(`bytes=${STALL}-`);
    const file = join(dataDir, 'models', 'tiny-1b.gguf');
    expect(existsSync(file)).toBe(true);

    await model.getByRole('button', { name: `Use ${TITLE}` }).click();
    await model.getByText('Installed, in use').waitFor();
    expect(settingsOf(dataDir)).toMatchObject({ modelUrl: MODEL_PRESETS.builtin, model: 'tiny-1b' });

    await model.getByRole('button', { name: `Remove ${TITLE}` }).click();
    const confirm = model.getByRole('group', { name: `Confirm removing ${TITLE}` });
    await confirm.getByText(/Its file \(262 KB\) is deleted/).waitFor();
    await confirm.getByRole('button', { name: 'Remove', exact: true }).click();
    await model.getByText('Not installed').waitFor();
    expect(existsSync(file)).toBe(false);

    const local = join(tempDir(), 'my-model.gguf');
    writeFileSync(local, ggufBytes(4096));
    const path = page.getByRole('textbox', { name: 'Path of a .gguf file on this machine' });
    await path.fill('my-model.gguf');
    await page.getByRole('button', { name: 'Add file' }).click();
    await page.getByRole('alert').filter({ hasText: 'my-model.gguf is not a full path: give the whole path of the .gguf file.' }).waitFor();
    await page.getByRole('alert').getByRole('button', { name: 'Dismiss' }).click();
    await path.fill(local);
    await page.getByRole('button', { name: 'Add file' }).click();
    const added = page.getByRole('list', { name: 'Models' }).getByRole('listitem', { name: 'my-model.gguf' });
    await added.getByText('Installed', { exact: true }).waitFor();
    expect(await path.inputValue()).toBe('');
    expect(await axeViolations(page)).toEqual([]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth)).toBe(true);
    await page.close();
  });

  it('offers "Get a model" at start when the default model server does not answer, and it opens the Models view', async () => {
    const dataDir = tempDir();
    const store = ArchonStore.open(dataDir);
    try {
      store.updateSettings({ modelUrl: `http://127.0.0.1:${await closedPort()}/v1` });
    } finally {
      store.close();
    }
    const page = await openServe(dataDir, []);
    await page.getByRole('region', { name: 'No model server' }).getByText(/No model server answers at http:\/\/127\.0\.0\.1:\d+\/v1\./).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Get a model', exact: true }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Models', level: 1 }).waitFor();
    await page.getByRole('list', { name: 'Models' }).getByRole('listitem', { name: TITLE }).waitFor();
    expect(await page.getByRole('button', { name: 'Get a model' }).count()).toBe(0);
    await page.close();
  });

  it('offers "Get a model" when Run finds the model server gone', async () => {
    const { page, server } = await openApp(() => ({ content: 'unused' }));
    expect(await page.getByRole('button', { name: 'Get a model' }).count()).toBe(0);
    await server.close();
    await startGoal(page, 'Say hello');
    await page.getByRole('alert').filter({ hasText: 'Cannot reach the model server' }).waitFor();
    await page.getByRole('button', { name: 'Get a model', exact: true }).click();
    await page.getByRole('heading', { name: 'Models', level: 1 }).waitFor();
    await page.close();
  });
  it('runs a goal on the built-in engine from the app: a local model added, Use, Run, and the run ends by itself with its calls counted', async () => {
    const dataDir = tempDir();
    const page = await openServe(dataDir, []);
    await nav(page, 'Models').click();
    // A small context bounds the run: a grammar keeps a random model writing until its context ends.
    const model = writeTinyModel(join(tempDir(), 'tiny.gguf'), { contextLength: 4096 });
    await page.getByRole('textbox', { name: 'Path of a .gguf file on this machine' }).fill(model);
    await page.getByRole('button', { name: 'Add file' }).click();
    const added = page.getByRole('list', { name: 'Models' }).getByRole('listitem', { name: 'tiny.gguf' });
    // Archon's own engine widens nothing: Use asks no one.
    await added.getByRole('button', { name: 'Use tiny.gguf' }).click();
    await added.getByText('Installed, in use').waitFor();
    await nav(page, 'Settings').click();
    await page.getByText(/built-in engine runs the model below itself, on this machine/).waitFor();
    expect(await page.getByRole('textbox', { name: 'Model server URL' }).count()).toBe(0);
    await nav(page, 'Runs').click();
    await startGoal(page, 'Compute 6*7 with the calculator and report it');
    // Under a grammar the tiny model sometimes plans validly: what the policy then asks (the plan, a step's call, the outcome) is approved as it comes, so accepted gaps end it completed_with_gaps; a step that exhausts its recovery asks what to do, and the run is ended there (failed).
    await expect
      .poll(
        async () => {
          await answerApproval(page);
          return endedRun(dataDir);
        },
        { timeout: 150_000, interval: 250 },
      )
      .not.toBeNull();
    expect(endedRun(dataDir)).toMatch(/^(completed|completed_with_gaps|failed)$/);
    const db = new Database(join(dataDir, 'archon.db'), { readonly: true });
    try {
      const calls = db.prepare("SELECT prompt_tokens AS prompt, completion_tokens AS completion FROM model_calls WHERE purpose = 'plan' AND status = 'completed'").all() as { prompt: number; completion: number }[];
      expect(calls.length).toBeGreaterThan(0);
      expect(calls.every((call) => call.prompt > 0 && call.completion > 0)).toBe(true);
    } finally {
      db.close();
    }
    await page.close();
  }, 240_000);
});
