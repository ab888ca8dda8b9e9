import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { probeMcpServer } from '../../../src/core/mcp/probe-server';
import type { McpServerConfig } from '../../../src/shared/schemas/settings';
import { useTempDirs } from '../../support/temp-dir';

/*
 * Red team: a stdio MCP server started as a run starts it (real bubblewrap) that tries to get out of
 * its sandbox before it answers, and reports what it found as its tool's description.
 */

const tempDir = useTempDirs();
const ESCAPE_SERVER = fileURLToPath(new URL('../../fixtures/mcp/sandbox-escape-server.mjs', import.meta.url));
const asRoot = process.getuid?.() === 0;

interface Report {
  capEff: string;
  noNewPrivs: string;
  umount: Record<string, number | null>;
  read: Record<string, string>;
}

async function reportOf(config: McpServerConfig, workspace: string, hidden: string[]): Promise<Report> {
  const probe = await probeMcpServer('escape', config, { workspace, sandbox: 'on', allowNetwork: false, hidden, timeoutMs: 30_000 });
  if (!probe.ok) throw new Error(probe.failure.message);
  return JSON.parse(probe.tools[0]?.description ?? '{}') as Report;
}

/** A home folder with the operator's workspace in it. */
function homeWithProject(): { home: string; workspace: string } {
  const home = tempDir();
  const workspace = join(home, 'project');
  mkdirSync(workspace);
  return { home, workspace };
}

describe.skipIf(!asRoot)('red team: an MCP server started by root (needs root: as any other user bubblewrap keeps no capability)', () => {
  it('has no capability, cannot unmount the tmpfs over the data dir inside its workspace, and cannot read what it hides', async () => {
    const home = tempDir();
    const dataDir = join(home, '.archon-data');
    mkdirSync(dataDir);
    writeFileSync(join(dataDir, 'archon.db'), 'THE-DATA-DIR');
    const report = await reportOf({ command: process.execPath, args: [ESCAPE_SERVER], env: { ESCAPE_UMOUNT: dataDir, ESCAPE_READ: join(dataDir, 'archon.db') } }, home, [home, dataDir]);
    expect(report.read).toEqual({ [join(dataDir, 'archon.db')]: 'unreadable: ENOENT' });
    expect(report.umount[dataDir]).not.toBe(0);
    expect(report.capEff).toBe('0000000000000000');
    expect(report.noNewPrivs).toBe('1');
  });
});

describe('red team: what a file of the home folder named by an MCP server opens', () => {
  it('an argument naming ~/.aws/mcp.json makes that file readable, not ~/.aws/credentials beside it', async () => {
    const { home, workspace } = homeWithProject();
    mkdirSync(join(home, '.aws'));
    const config = join(home, '.aws', 'mcp.json');
    const credentials = join(home, '.aws', 'credentials');
    writeFileSync(config, '{"region":"eu-west-1"}');
    writeFileSync(credentials, 'aws_secret_access_key=AWS-SECRET');
    const report = await reportOf({ command: process.execPath, args: [ESCAPE_SERVER, config], env: { ESCAPE_READ: `${config}:${credentials}` } }, workspace, [home]);
    expect(report.read).toEqual({ [config]: '{"region":"eu-west-1"}', [credentials]: 'unreadable: ENOENT' });
  });

  it('a command installed in ~/.local/bin runs, but ~/.local (the keyring folder) is not opened with it', async () => {
    const { home, workspace } = homeWithProject();
    const command = join(home, '.local', 'bin', 'escape-mcp');
    const keyring = join(home, '.local', 'share', 'keyrings', 'login.keyring');
    mkdirSync(join(home, '.local', 'bin'), { recursive: true });
    mkdirSync(join(home, '.local', 'share', 'keyrings'), { recursive: true });
    copyFileSync(ESCAPE_SERVER, command);
    chmodSync(command, 0o755);
    writeFileSync(keyring, 'KEYRING-SECRET');
    const report = await reportOf({ command, env: { ESCAPE_READ: `${command}:${keyring}` } }, workspace, [home]);
    expect(report.read[keyring]).toBe('unreadable: ENOENT');
    expect(report.read[command]).toContain('ESCAPE_READ');
  });
});
