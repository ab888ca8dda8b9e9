import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useTempDirs } from '../support/temp-dir';

const script = fileURLToPath(new URL('../../scripts/check-electron.mjs', import.meta.url));
const tempDir = useTempDirs();

describe('npm start without an Electron binary', () => {
  it("prints Archon's own message: what is missing, how to get it, and that archon serve gives the same UI", () => {
    const nowhere = tempDir();
    const result = spawnSync(process.execPath, [script], { env: { ...process.env, ELECTRON_OVERRIDE_DIST_PATH: nowhere }, encoding: 'utf8' });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`Archon cannot open the desktop app: there is no Electron binary at ${nowhere}/`);
    expect(result.stderr).toContain('node node_modules/electron/install.js');
    expect(result.stderr).toContain('`npx archon serve` gives the same UI in a browser');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
