import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stdioLaunch, type StdioServer } from '../../../src/core/mcp/stdio-launch';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();

/** What a server started as `server` could read: the sandbox it would get, running `cat` on each path instead. */
function readableInSandbox(server: StdioServer, workspace: string, paths: readonly string[], hidden: string[] = []): Record<string, boolean> {
  const launched = stdioLaunch('probe', server, { workspace, sandbox: 'on', allowNetwork: false, hidden });
  if (!launched.ok) throw new Error(launched.failure.message);
  const root = launched.launch.args.slice(0, launched.launch.args.indexOf('--'));
  return Object.fromEntries(paths.map((path) => [path, spawnSync('bwrap', [...root, '--', '/bin/cat', path], { cwd: workspace }).status === 0]));
}

/** A monorepo around the workspace: its own package.json, a secret beside the workspace, a server script in a tools folder. */
function monorepo() {
  const mono = tempDir();
  writeFileSync(join(mono, 'package.json'), '{"name":"mono"}');
  writeFileSync(join(mono, 'secret.txt'), 'beside the workspace');
  const workspace = join(mono, 'ws');
  mkdirSync(workspace);
  mkdirSync(join(mono, 'tools'));
  writeFileSync(join(mono, 'tools', 'server.mjs'), '// the server');
  const other = tempDir();
  writeFileSync(join(other, 'package.json'), '{"name":"other"}');
  writeFileSync(join(other, 'sibling.txt'), 'beside the data folder');
  mkdirSync(join(other, 'data'));
  writeFileSync(join(other, 'data', 'shared.txt'), 'the folder the server was given');
  return { mono, workspace, other };
}

describe('what a sandboxed stdio server may read', () => {
  it('its script, but not the monorepo around the workspace that the script’s package.json would open', () => {
    const { mono, workspace } = monorepo();
    const script = join(mono, 'tools', 'server.mjs');
    expect(readableInSandbox({ command: process.execPath, args: [script] }, workspace, [script, join(mono, 'secret.txt')])).toEqual({ [script]: true, [join(mono, 'secret.txt')]: false });
  });

  it('a folder argument opens that folder only, never its parent; a folder holding the workspace opens nothing', () => {
    const { mono, workspace, other } = monorepo();
    const given = join(other, 'data', 'shared.txt');
    const server = { command: process.execPath, args: [join(other, 'data'), mono] };
    expect(readableInSandbox(server, workspace, [given, join(other, 'sibling.txt'), join(mono, 'secret.txt')])).toEqual({
      [given]: true,
      [join(other, 'sibling.txt')]: false,
      [join(mono, 'secret.txt')]: false,
    });
  });
});

describe('a server started through npx or another node script', () => {
  /** An nvm-style install outside the system folders: bin/node (this test's Node) and bin/npx, a `#!/usr/bin/env node` script that reports where it runs. */
  function nvmInstall() {
    const nvm = tempDir();
    mkdirSync(join(nvm, 'bin'));
    mkdirSync(join(nvm, 'lib'));
    symlinkSync(process.execPath, join(nvm, 'bin', 'node'));
    const script = join(nvm, 'lib', 'npx-cli.js');
    writeFileSync(script, '#!/usr/bin/env node\nprocess.stdout.write(JSON.stringify({ version: process.version, home: process.env.HOME, cache: process.env.npm_config_cache }));\n');
    chmodSync(script, 0o755);
    symlinkSync(script, join(nvm, 'bin', 'npx'));
    return join(nvm, 'bin', 'npx');
  }

  it('runs on the node installed beside the command, with HOME and npm’s cache in the sandbox’s private /tmp, not the workspace', () => {
    const workspace = tempDir();
    const launched = stdioLaunch('npx', { command: nvmInstall() }, { workspace, sandbox: 'on', allowNetwork: false, hidden: [] });
    if (!launched.ok) throw new Error(launched.failure.message);
    const ran = spawnSync(launched.launch.file, launched.launch.args, { env: launched.launch.env, cwd: workspace, encoding: 'utf8' });
    expect(ran.stderr).toBe('');
    expect(JSON.parse(ran.stdout)).toEqual({ version: process.version, home: '/tmp', cache: '/tmp/.npm' });
  });
});

describe('hidden folders', () => {
  it('a hidden folder named through a symlink is hidden where it really is, inside the workspace', () => {
    const workspace = tempDir();
    mkdirSync(join(workspace, 'data'));
    writeFileSync(join(workspace, 'data', 'archon.db'), 'the data dir');
    writeFileSync(join(workspace, 'notes.txt'), 'work');
    const config = tempDir();
    symlinkSync(join(workspace, 'data'), join(config, 'Archon'));
    const read = readableInSandbox({ command: '/bin/true' }, workspace, [join(workspace, 'data', 'archon.db'), join(workspace, 'notes.txt')], [join(config, 'Archon')]);
    expect(read).toEqual({ [join(workspace, 'data', 'archon.db')]: false, [join(workspace, 'notes.txt')]: true });
    expect(readdirSync(join(workspace, 'data'))).toEqual(['archon.db']);
    symlinkSync(workspace, join(config, 'ws'));
    expect(readableInSandbox({ command: '/bin/true' }, join(config, 'ws'), [join(workspace, 'data', 'archon.db')], [join(config, 'Archon')])).toEqual({ [join(workspace, 'data', 'archon.db')]: false });
  });
});
