import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { planReply, type ScriptedModelServer } from '../../kit/scripted-model-server';
import { spawnArchon } from '../../support/archon-process';
import { useModelServers } from '../../support/model-servers';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
const modelServer = useModelServers();

const RUN_KEY = 'RUNKEY-5c1d0e7a9b';

function keyFile(): string {
  const file = join(tempDir(), 'key.txt');
  writeFileSync(file, `${RUN_KEY}\n`);
  return file;
}

const authorizations = (server: ScriptedModelServer) => server.requests.filter((request) => request.path.startsWith('/v1/')).map((request) => request.headers.authorization ?? null);

describe('archon run --roles: one key, one origin', () => {
  it.each([
    { given: '--api-key', flags: () => ['--api-key', RUN_KEY], env: {} },
    { given: '--api-key-file', flags: () => ['--api-key-file', keyFile()], env: {} },
    { given: 'OPENAI_API_KEY', flags: () => [], env: { OPENAI_API_KEY: RUN_KEY } },
  ])('sends the key from $given to the run’s server only, never to a role’s server that has no key of its own', async ({ flags, env }) => {
    const runServer = await modelServer({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'a', description: 'think' }]) : { content: 'done' }) });
    const roleServer = await modelServer({ reply: () => ({ content: 'thought' }) });
    const roles = join(tempDir(), 'roles.json');
    writeFileSync(roles, JSON.stringify({ roles: { executor: { model: { url: roleServer.url, name: 'scripted-model' } } } }));
    const result = await spawnArchon(['run', 'think', '--model-url', runServer.url, '--roles', roles, '--data-dir', tempDir(), '--workspace', tempDir(), '--approve', 'auto', ...flags()], { OPENAI_API_KEY: '', ...env }).done;
    expect(result.status, result.stderr).toBe(0);
    expect(roleServer.countByPurpose().step).toBeGreaterThan(0);
    expect(authorizations(roleServer).length).toBeGreaterThan(0);
    expect(authorizations(roleServer).filter((header) => header?.includes(RUN_KEY))).toEqual([]);
    expect(authorizations(runServer).length).toBeGreaterThan(0);
    expect(authorizations(runServer).every((header) => header === `Bearer ${RUN_KEY}`)).toBe(true);
  });
});
