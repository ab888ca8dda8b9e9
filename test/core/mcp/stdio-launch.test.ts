import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stdioLaunch, type StdioServer } from '../../../src/core/mcp/stdio-launch';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();

/** What a server started as `server` could read: the sandbox it would get, running `cat` on each path instead. */
function readableInSandbox(server: StdioServer, workspace: string, paths: readonly string[]): Record<string, boolean> {
  const launched = stdioLaunch('probe', server, { workspace, sandbox: 'on', allowNetwork: false, hidden: [] });
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
