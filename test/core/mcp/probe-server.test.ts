import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { probeMcpServer } from '../../../src/core/mcp/probe-server';
import { useTempDirs } from '../../support/temp-dir';
import { everythingStdio, FAILING_SERVERS } from '../../support/mcp-servers';

const tempDir = useTempDirs();
const confinement = (workspace: string) => ({ workspace, sandbox: 'on' as const, allowNetwork: false, hidden: [] });

describe('probeMcpServer', () => {
  it('starts server-everything inside the sandbox and lists its tools with side effects from their annotations', async () => {
    const probe = await probeMcpServer('everything', everythingStdio(), { ...confinement(tempDir()), timeoutMs: 60_000 });
    expect(probe.ok).toBe(true);
    if (!probe.ok) return;
    const byName = new Map(probe.tools.map((tool) => [tool.name, tool]));
    expect(byName.get('echo')).toMatchObject({ registeredName: 'everything__echo', sideEffects: 'none', idempotent: true });
    expect(byName.get('get-sum')).toMatchObject({ registeredName: 'everything__get-sum' });
    expect(byName.get('toggle-simulated-logging')).toMatchObject({ sideEffects: 'reversible', idempotent: false });
  }, 90_000);

  it('starts a server the Claude Desktop way, through npx (offline, from the project’s node_modules), leaving nothing of npm’s in the workspace', async () => {
    const workspace = tempDir();
    const project = fileURLToPath(new URL('../../../', import.meta.url));
    const config = { command: 'npx', args: ['--offline', '--no-install', '--prefix', project, 'mcp-server-everything', 'stdio'] };
    const probe = await probeMcpServer('everything', config, { ...confinement(workspace), timeoutMs: 60_000 });
    expect(probe).toMatchObject({ ok: true, tools: expect.arrayContaining([expect.objectContaining({ registeredName: 'everything__echo' })]) });
    expect(readdirSync(workspace)).toEqual([]);
  }, 90_000);

  it('says which server failed and how: command not found, crashed with its stderr, timed out at initialize', async () => {
    const workspace = tempDir();
    const [missing, crashing, hanging] = await Promise.all([
      probeMcpServer('missing', FAILING_SERVERS.missing, confinement(workspace)),
      probeMcpServer('crashing', FAILING_SERVERS.crashing, confinement(workspace)),
      probeMcpServer('hanging', FAILING_SERVERS.hanging, { ...confinement(workspace), timeoutMs: 3000 }),
    ]);
    expect(missing).toMatchObject({ ok: false, failure: { kind: 'not_found', message: expect.stringContaining('"missing"') } });
    expect(crashing).toMatchObject({ ok: false, failure: { kind: 'crashed', message: expect.stringMatching(/"crashing".*exit code 7[\s\S]*cannot open the database/) } });
    expect(hanging).toMatchObject({ ok: false, failure: { kind: 'timeout', message: expect.stringContaining('"hanging" did not answer initialize') } });
  }, 90_000);
});
