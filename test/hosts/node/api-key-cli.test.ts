import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RunEventSchema } from '../../../src/shared/schemas/events';
import { planReply, startModelServer, toolMessagesOf, type ScriptedModelServer } from '../../kit/scripted-model-server';
import { spawnArchon } from '../../support/archon-process';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const FLAG_KEY = 'SECRETKEY123';
const ENV_KEY = 'ENVSECRET4567';

/** What an attacker's command would try: its own environment, every process's command line and environment. */
const SNOOP = [
  'echo "--- env"; env',
  'echo "--- cmdline"; cat /proc/*/cmdline 2>/dev/null | tr "\\000" "\\n" | grep -a -A1 -e --api-key',
  'echo "--- environ"; cat /proc/*/environ 2>/dev/null | tr "\\000" "\\n" | grep -a OPENAI_API_KEY',
  'true',
].join('; ');

function modeOf(path: string): string {
  return (statSync(path).mode & 0o777).toString(8);
}

/** Every file of a database that exists (the WAL and shared memory included), as bytes. */
function databaseBytes(dataDir: string, name: string): Buffer {
  return Buffer.concat(['', '-wal', '-shm'].map((suffix) => join(dataDir, name + suffix)).filter(existsSync).map((file) => readFileSync(file)));
}

describe('the API key on the command line', () => {
  it('never reaches a tool, archon.db or audit.db; the data dir is 0700 and the databases 0600', async () => {
    server = await startModelServer({
      reply: (request) => {
        if (request.purpose === 'plan') return planReply([{ id: 'snoop', description: 'look around' }]);
        if (request.purpose === 'final') return { content: 'looked' };
        return toolMessagesOf(request).length > 0 ? { content: 'seen' } : { toolCalls: [{ name: 'run_command', arguments: { command: SNOOP } }] };
      },
    });
    const dataDir = join(tempDir(), 'data');
    const result = await spawnArchon(
      ['run', 'look around', '--model-url', server.url, '--api-key', FLAG_KEY, '--data-dir', dataDir, '--workspace', tempDir(), '--policy', 'permissive', '--approve', 'auto', '--json'],
      { OPENAI_API_KEY: ENV_KEY },
    ).done;
    expect(result.status, result.stderr).toBe(0);

    const events = result.stdout.trim().split('\n').map((line) => RunEventSchema.parse(JSON.parse(line)));
    const output = events.find((event) => event.type === 'tool.completed');
    expect(output).toMatchObject({ tool: 'run_command', status: 'success', content: expect.stringContaining('PATH=') });
    const toolMessage = server.chatRequests.flatMap(toolMessagesOf).join('\n');
    expect(toolMessage).toContain('--- env');
    for (const key of [FLAG_KEY, ENV_KEY]) {
      expect(result.stdout).not.toContain(key);
      expect(toolMessage).not.toContain(key);
      expect(databaseBytes(dataDir, 'archon.db').includes(key)).toBe(false);
      expect(databaseBytes(dataDir, 'audit.db').includes(key)).toBe(false);
    }
    const apiRequests = server.requests.filter((request) => request.path.startsWith('/v1/'));
    expect(apiRequests.map((request) => request.headers.authorization)).toEqual(apiRequests.map(() => `Bearer ${FLAG_KEY}`));

    expect(modeOf(dataDir)).toBe('700');
    for (const name of ['archon.db', 'audit.db', 'archon.db-wal', 'archon.db-shm', 'audit.db-wal', 'audit.db-shm']) {
      if (existsSync(join(dataDir, name))) expect(modeOf(join(dataDir, name)), name).toBe('600');
    }
  });

  it('takes --api-key out of its own command line once started', async () => {
    server = await startModelServer({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'a', description: 'think' }]) : { hang: true }) });
    const { child, done } = spawnArchon(['run', 'x', '--model-url', server.url, '--api-key', FLAG_KEY, '--data-dir', tempDir(), '--approve', 'auto'], { OPENAI_API_KEY: '' });
    await expect.poll(() => server?.chatRequests.length, { timeout: 15_000 }).toBeGreaterThan(1);
    expect(readFileSync(`/proc/${child.pid}/cmdline`, 'utf8')).not.toContain(FLAG_KEY);
    child.kill('SIGTERM');
    await done;
  });

  it('reads the key from --api-key-file, and refuses an unreadable file with exit 2', async () => {
    server = await startModelServer({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'a', description: 'think' }]) : { content: 'ok' }) });
    const keyFile = join(tempDir(), 'key');
    writeFileSync(keyFile, 'FILEKEY-8901\n', { mode: 0o600 });
    const ok = await spawnArchon(['run', 'x', '--model-url', server.url, '--api-key-file', keyFile, '--data-dir', tempDir(), '--approve', 'auto'], { OPENAI_API_KEY: '' }).done;
    expect(ok.status, ok.stderr).toBe(0);
    expect(server.requests.map((request) => request.headers.authorization)).toContain('Bearer FILEKEY-8901');

    const missing = await spawnArchon(['run', 'x', '--model-url', server.url, '--api-key-file', join(tempDir(), 'none'), '--data-dir', tempDir()], { OPENAI_API_KEY: '' }).done;
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/Cannot read the API key file .*--api-key-file/);
  });
});
