#!/usr/bin/env node
// Run by `npm test` first (the "pretest" script): makes sure the tools the tests need are here — a
// Chromium for the UI tests and bubblewrap for the sandbox tests — or stops at once with one line
// saying what to install. Chromium comes from Playwright's own download where the network allows
// it, else from Debian where apt-get can run (Debian's `chromium` on PATH is used first). Plain JavaScript: this runs under the machine's Node.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The full path of `command` on PATH, or null. */
function onPath(command) {
  const dirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  return dirs.map((dir) => join(dir, command)).find((path) => existsSync(path)) ?? null;
}

/** Runs an installer quietly: its failure is summed up in our one line. */
function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'ignore', env: process.env });
  return result.status === 0;
}

/** Playwright's own Chromium for this playwright-core, where it has been downloaded. */
function playwrightChromium() {
  const result = spawnSync(process.execPath, ['-e', "process.stdout.write(require('playwright-core').chromium.executablePath())"], { cwd: root, encoding: 'utf8', env: process.env });
  return result.status === 0 && existsSync(result.stdout) ? result.stdout : null;
}

function findChromium() {
  const configured = process.env.ARCHON_CHROMIUM;
  if (configured) return existsSync(configured) ? configured : null;
  return onPath('chromium') ?? playwrightChromium();
}

const canApt = () => onPath('apt-get') && process.getuid?.() === 0;
const aptInstall = (packages) => run('apt-get', ['update', '-qq']) && run('apt-get', ['install', '-y', '-qq', ...packages]);

function provisionChromium() {
  if (findChromium()) return true;
  if (process.env.ARCHON_CHROMIUM) return false;
  process.stderr.write('tests: no Chromium found; trying Playwright\'s download\n');
  if (run(process.execPath, [join(root, 'node_modules', 'playwright-core', 'cli.js'), 'install', 'chromium']) && findChromium()) return true;
  if (canApt()) {
    process.stderr.write('tests: installing chromium from Debian\n');
    return aptInstall(['chromium']) && findChromium() !== null;
  }
  return false;
}

function provisionBubblewrap() {
  if (onPath('bwrap')) return true;
  if (!canApt()) return false;
  process.stderr.write('tests: installing bubblewrap from Debian\n');
  return aptInstall(['bubblewrap']) && onPath('bwrap');
}

const missing = [];
if (!provisionChromium()) {
  missing.push(process.env.ARCHON_CHROMIUM ? `a Chromium at ARCHON_CHROMIUM=${process.env.ARCHON_CHROMIUM}` : 'Chromium (`apt-get install -y chromium`, or `npx playwright-core install chromium` with network access)');
}
if (!provisionBubblewrap()) missing.push('bubblewrap (`apt-get install -y bubblewrap`)');
if (missing.length > 0) {
  process.stderr.write(`npm test needs ${missing.join(' and ')}; install it and run npm test again (bash .ci/run installs everything on Debian).\n`);
  process.exit(1);
}
