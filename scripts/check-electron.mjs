#!/usr/bin/env node
// Run by `npm start` before Electron launches: when the Electron binary is missing, say so in
// Archon's words instead of the electron package's download attempt and stack trace.
// Looks for the binary the way node_modules/electron/index.js does, without requiring it (that
// would start the download). Plain JavaScript on purpose: this runs under the machine's own Node.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = fileURLToPath(new URL('../node_modules/electron/', import.meta.url));

function missingBinary() {
  if (!existsSync(packageDir)) return 'the electron package is not installed (node_modules/electron is absent)';
  const pathFile = join(packageDir, 'path.txt');
  const name = existsSync(pathFile) ? readFileSync(pathFile, 'utf8').trim() : '';
  const override = process.env.ELECTRON_OVERRIDE_DIST_PATH;
  if (!override && !name) return 'the Electron binary was never downloaded (node_modules/electron/path.txt is absent)';
  const binary = override ? join(override, name || 'electron') : join(packageDir, 'dist', name);
  return existsSync(binary) ? null : `there is no Electron binary at ${binary}`;
}

const missing = missingBinary();
if (missing) {
  process.stderr.write(
    [
      `Archon cannot open the desktop app: ${missing}.`,
      'Get it with `node node_modules/electron/install.js` (downloads Electron from GitHub; needs network access), then run `npm start` again.',
      'Without it, `npx archon serve` gives the same UI in a browser (after `npm run build`).',
      '',
    ].join('\n'),
  );
  process.exit(1);
}
