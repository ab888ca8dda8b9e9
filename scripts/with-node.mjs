#!/usr/bin/env node
// Runs a command with a Node >= 22.12 first on PATH: `node scripts/with-node.mjs vitest run`.
import { spawn } from 'node:child_process';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureNodeBin } from './node-runtime.mjs';

const [command, ...args] = process.argv.slice(2);
if (!command) {
  process.stderr.write('usage: node scripts/with-node.mjs COMMAND [ARGS…]\n');
  process.exit(2);
}

let nodeBin;
try {
  nodeBin = ensureNodeBin();
} catch (error) {
  process.stderr.write(`${error.message}\n`);
  process.exit(2);
}
const projectBin = join(fileURLToPath(new URL('..', import.meta.url)), 'node_modules', '.bin');
const child = spawn(command, args, {
  stdio: 'inherit',
  env: { ...process.env, PATH: [nodeBin, projectBin, process.env.PATH].join(delimiter) },
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('error', (error) => {
  process.stderr.write(`could not start ${command}: ${error.message}\n`);
  process.exit(2);
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
