import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useTempDirs } from '../support/temp-dir';

const script = fileURLToPath(new URL('../../scripts/provision-test-tools.mjs', import.meta.url));
const tempDir = useTempDirs();

/** A PATH holding only the given tools (symlinks to the machine's), no apt-get; Playwright's download unreachable. */
function provision(tools: Record<string, string>) {
  const dir = tempDir();
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  for (const [name, target] of Object.entries(tools)) symlinkSync(target, join(bin, name));
  const env = { HOME: dir, PATH: bin, PLAYWRIGHT_BROWSERS_PATH: join(dir, 'browsers'), PLAYWRIGHT_DOWNLOAD_HOST: 'http://127.0.0.1:9' };
  return spawnSync(process.execPath, [script], { env, encoding: 'utf8' });
}

describe('the test provisioning script (npm test runs it first)', () => {
  it('with no Chromium, no bubblewrap and no apt-get, fails with one line saying what to install', () => {
    const result = provision({});
    expect(result.status).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines.at(-1)).toMatch(/^npm test needs Chromium \(`apt-get install -y chromium`.*\) and bubblewrap \(`apt-get install -y bubblewrap`\)/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it.skipIf(!existsSync('/usr/bin/chromium') || !existsSync('/usr/bin/bwrap'))('passes where Chromium and bubblewrap are on PATH (skipped without Debian\'s packages)', () => {
    const result = provision({ chromium: '/usr/bin/chromium', bwrap: '/usr/bin/bwrap' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it.skipIf(!existsSync('/usr/bin/chromium'))('names only bubblewrap when Chromium is there', () => {
    const result = provision({ chromium: '/usr/bin/chromium' });
    expect(result.status).toBe(1);
    expect(result.stderr.trim()).toBe('npm test needs bubblewrap (`apt-get install -y bubblewrap`); install it and run npm test again (bash .ci/run installs everything on Debian).');
  });
});
