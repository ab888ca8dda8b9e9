import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { _electron as electron } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { builtFile } from '../support/built';
import { useTempDirs } from '../support/temp-dir';

const tempDir = useTempDirs();

/**
 * The Electron binary is downloaded from GitHub on first use, which this workplace cannot reach.
 * Look for it the way the electron package does, without `require('electron')`, which would try
 * the download.
 */
function electronBinary(): { path: string } | { missing: string } {
  const packageDir = fileURLToPath(new URL('../../node_modules/electron/', import.meta.url));
  const pathFile = `${packageDir}path.txt`;
  if (!existsSync(pathFile)) return { missing: 'the Electron binary is not installed (node_modules/electron/path.txt is absent; the download cannot reach GitHub here)' };
  const path = `${packageDir}dist/${readFileSync(pathFile, 'utf8').trim()}`;
  return existsSync(path) ? { path } : { missing: `no Electron binary at ${path}` };
}

const binary = electronBinary();
const skipReason = 'missing' in binary ? binary.missing : null;
if (skipReason) console.warn(`Electron end-to-end tests skipped: ${skipReason}.`);

describe.skipIf(skipReason !== null)(`the Electron app${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  it('opens the window with the Emergency stop button, and the page has no Node and no raw ipcRenderer', async () => {
    const app = await electron.launch({
      executablePath: 'path' in binary ? binary.path : undefined,
      args: [builtFile('main/index.js')],
      env: { ...process.env, ARCHON_DATA_DIR: tempDir() },
    });
    try {
      const window = await app.firstWindow();
      await window.getByRole('button', { name: 'Emergency stop' }).waitFor();
      const exposed = await window.evaluate(() => ({
        require: typeof (globalThis as { require?: unknown }).require,
        process: typeof (globalThis as { process?: unknown }).process,
        bridge: Object.keys((globalThis as { archon?: object }).archon ?? {}).sort(),
      }));
      expect(exposed).toEqual({ require: 'undefined', process: 'undefined', bridge: ['commands', 'onEvent'] });
    } finally {
      await app.close();
    }
  });
});
