import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { processesMatching } from '../../support/processes';
import { useServe, type ServeProcess } from '../../support/archon-process';
import { useTempDirs } from '../../support/temp-dir';

const SILENT_SERVER = fileURLToPath(new URL('../../fixtures/mcp/silent-server.mjs', import.meta.url));
const tempDir = useTempDirs();
const startServe = useServe();

type Result = { ok: boolean; value?: unknown; error?: { code: string; message: string } };

async function connect(serve: ServeProcess): Promise<(command: string, input: unknown) => Promise<Result>> {
  const ws = new WebSocket(`ws://127.0.0.1:${serve.url.port}/ws`, ['archon', `archon-token.${serve.token}`], { origin: serve.origin });
  const waiting = new Map<number, (result: Result) => void>();
  ws.on('message', (data) => {
    const frame = JSON.parse(String(data)) as { id?: number; result?: Result };
    if (frame.id !== undefined && frame.result) waiting.get(frame.id)?.(frame.result);
  });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  let nextId = 1;
  return (command, input) => {
    const id = nextId++;
    ws.send(JSON.stringify({ id, command, input }));
    return new Promise((resolve) => waiting.set(id, resolve));
  };
}

const started = (workspace: string) => (existsSync(`${workspace}/started.txt`) ? readFileSync(`${workspace}/started.txt`, 'utf8') : '');

describe('the emergency stop over `archon serve`', () => {
  it('ends an MCP Test hanging at initialize, kills its server, and refuses a new one while latched', async () => {
    const workspace = tempDir();
    const serve = await startServe(tempDir(), ['--trust-ui', '--workspace', workspace]);
    const call = await connect(serve);
    const test = (marker: string) => call('mcp.probe', { name: 'silent', config: { command: process.execPath, args: [SILENT_SERVER, marker] } });

    const hanging = randomUUID();
    const outcome = test(hanging);
    await vi.waitFor(() => expect(started(workspace)).toContain(hanging), { timeout: 30_000, interval: 50 });
    expect(processesMatching(hanging)).not.toEqual([]);

    expect(await call('estop.trigger', { reason: 'the Test hangs' })).toMatchObject({ ok: true, value: { latched: true } });
    expect(await outcome).toMatchObject({ ok: false, error: { code: 'ESTOP_LATCHED', message: expect.stringContaining('Re-arm') } });
    expect(processesMatching(hanging)).toEqual([]);

    const refused = randomUUID();
    expect(await test(refused)).toMatchObject({ ok: false, error: { code: 'ESTOP_LATCHED', message: expect.stringContaining('Re-arm') } });
    expect(started(workspace)).not.toContain(refused);
    expect(processesMatching(refused)).toEqual([]);
  }, 60_000);

  it('lets an MCP Test start again once re-armed, and the next stop ends that one too', async () => {
    const workspace = tempDir();
    const serve = await startServe(tempDir(), ['--trust-ui', '--workspace', workspace]);
    const call = await connect(serve);
    expect(await call('estop.trigger', { reason: 'first' })).toMatchObject({ ok: true });
    expect(await call('estop.reset', {})).toMatchObject({ ok: true, value: { latched: false } });

    const marker = randomUUID();
    const outcome = call('mcp.probe', { name: 'silent', config: { command: process.execPath, args: [SILENT_SERVER, marker] } });
    await vi.waitFor(() => expect(started(workspace)).toContain(marker), { timeout: 30_000, interval: 50 });
    expect(await call('estop.trigger', { reason: 'second' })).toMatchObject({ ok: true });
    expect(await outcome).toMatchObject({ ok: false, error: { code: 'ESTOP_LATCHED', message: expect.stringContaining('second') } });
    expect(processesMatching(marker)).toEqual([]);
  }, 60_000);
});
