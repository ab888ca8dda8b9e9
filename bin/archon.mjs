#!/usr/bin/env node
// The `archon` command: runs the built CLI under a Node >= 22.12, provisioning one when needed.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ensureNodeBin, isSupported } from '../scripts/node-runtime.mjs';

const cli = fileURLToPath(new URL('../out/node/cli.js', import.meta.url));
if (!existsSync(cli)) {
  process.stderr.write('archon: the CLI is not built yet. Run `npm run build` in the Archon folder first.\n');
  process.exit(2);
}

if (isSupported(process.version)) {
  await import(cli);
} else {
  let nodeBin;
  try {
    nodeBin = ensureNodeBin();
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
  const child = spawn(`${nodeBin}/node`, [cli, ...process.argv.slice(2)], { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal === 'SIGINT' ? 130 : 143)));
}
