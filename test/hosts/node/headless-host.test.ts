import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { COMMAND_NAMES } from '../../../src/shared/ipc/contract';
import type { ApprovalRequest } from '../../../src/shared/schemas/approval';
import { planReply, startModelServer, type ScriptedModelServer } from '../../kit/scripted-model-server';
import { useServe, type ServeProcess } from '../../support/archon-process';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
const startServe = useServe();
const models: ScriptedModelServer[] = [];
afterEach(async () => {
  await Promise.all(models.splice(0).map((model) => model.close()));
});

async function modelServer(): Promise<ScriptedModelServer> {
  const model = await startModelServer({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'a', description: 'think' }]) : { content: 'done' }) });
  models.push(model);
  return model;
}

interface Socket {
  ws: WebSocket;
  call(command: string, input?: unknown): Promise<{ ok: boolean; value?: unknown; error?: { code: string; message: string } }>;
  sendRaw(text: string): Promise<unknown>;
  events: unknown[];
}

function openSocket(serve: ServeProcess, options: { token?: string; origin?: string } = {}): Promise<Socket> {
  const ws = new WebSocket(`ws://127.0.0.1:${serve.url.port}/ws`, ['archon', `archon-token.${options.token ?? serve.token}`], { origin: options.origin ?? serve.origin });
  const waiting = new Map<number | null, (result: never) => void>();
  const events: unknown[] = [];
  let nextId = 1;
  ws.on('message', (data) => {
    const frame = JSON.parse(String(data)) as { id?: number | null; result?: never; event?: unknown };
    if ('event' in frame) events.push(frame.event);
    else waiting.get(frame.id ?? null)?.(frame.result as never);
  });
  return new Promise((resolve, reject) => {
    ws.once('unexpected-response', (_request, response) => reject(new Error(`HTTP ${response.statusCode}`)));
    ws.once('error', reject);
    ws.once('open', () =>
      resolve({
        ws,
        events,
        call(command, input = {}) {
          const id = nextId++;
          return new Promise((done) => {
            waiting.set(id, done as never);
            ws.send(JSON.stringify({ id, command, input }));
          });
        },
        sendRaw(text) {
          return new Promise((done) => {
            waiting.set(null, done as never);
            ws.send(text);
          });
        },
      }),
    );
  });
}

describe('archon serve (headless host)', () => {
  it('prints exactly the URL line first, bound to 127.0.0.1 with a token', async () => {
    const serve = await startServe(tempDir());
    expect(serve.firstLine).toMatch(/^Archon UI: http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{20,}$/);
  });

  it('uses a fresh token on every start', async () => {
    const dir = tempDir();
    const first = await startServe(dir);
    const second = await startServe(tempDir());
    expect(first.token).not.toBe(second.token);
  });

  it('serves the UI, which is not secret, without a token and sets no cookie', async () => {
    const serve = await startServe(tempDir());
    const base = `http://127.0.0.1:${serve.url.port}`;
    const page = await fetch(serve.url);
    expect(page.status).toBe(200);
    expect(page.headers.get('set-cookie')).toBeNull();
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await page.text();
    expect(html).toContain('<div id="root">');
    const script = /src="([^"]+\.js)"/.exec(html)?.[1] ?? '';
    const asset = await fetch(`${base}${script.replace(/^\./, '')}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toContain('javascript');
  });

  it('refuses a request naming another host (DNS rebinding), even with the token', async () => {
    const serve = await startServe(tempDir());
    const { request } = await import('node:http');
    const status = await new Promise<number | undefined>((resolve) => {
      request({ host: '127.0.0.1', port: serve.url.port, path: `/?token=${serve.token}`, headers: { host: 'evil.example' } }, (response) => resolve(response.statusCode)).end();
    });
    expect(status).toBe(403);
  });

  it('refuses a WebSocket without the token (401) and from a foreign origin (403)', async () => {
    const serve = await startServe(tempDir());
    await expect(openSocket(serve, { token: 'nope' })).rejects.toThrow('HTTP 401');
    await expect(openSocket(serve, { origin: 'https://evil.example' })).rejects.toThrow('HTTP 403');
  });

  it('has a handler for every command of the contract', async () => {
    const socket = await openSocket(await startServe(tempDir()));
    for (const name of COMMAND_NAMES) {
      const result = await socket.call(name, {});
      expect(result.ok || result.error?.code !== 'UNKNOWN_COMMAND', `${name}: ${JSON.stringify(result.error)}`).toBe(true);
    }
    expect(await socket.call('no.such.command', {})).toMatchObject({ ok: false, error: { code: 'UNKNOWN_COMMAND' } });
  });

  it('answers broken payloads and frames with typed errors and keeps serving', async () => {
    const serve = await startServe(tempDir());
    const socket = await openSocket(serve);
    expect(await socket.call('settings.update', { concurrency: 'lots' })).toMatchObject({ ok: false, error: { code: 'VALIDATION_FAILED', message: expect.stringContaining('concurrency') } });
    expect(await socket.call('runs.list', { limit: 1e9 })).toMatchObject({ ok: false, error: { code: 'VALIDATION_FAILED' } });
    expect(await socket.call('mcp.probe', { name: 'a b', config: { command: 'x', shell: true } })).toMatchObject({
      ok: false,
      error: { code: 'VALIDATION_FAILED', message: expect.stringMatching(/name[\s\S]*config/) },
    });
    expect(await socket.call('fs.delete', {})).toMatchObject({ ok: false, error: { code: 'UNKNOWN_COMMAND' } });
    expect(await socket.sendRaw('{not json')).toMatchObject({ ok: false, error: { code: 'VALIDATION_FAILED' } });
    expect(await socket.sendRaw(JSON.stringify({ id: -1, command: 5 }))).toMatchObject({ ok: false, error: { code: 'VALIDATION_FAILED' } });
    expect(await socket.call('app.info')).toMatchObject({ ok: true, value: { host: 'headless' } });
    expect(serve.child.exitCode).toBeNull();
  });

  it('announces an emergency stop to every connected client', async () => {
    const serve = await startServe(tempDir());
    const watcher = await openSocket(serve);
    const operator = await openSocket(serve);
    await operator.call('estop.trigger', { reason: 'test' });
    await expect.poll(() => watcher.events).toContainEqual(expect.objectContaining({ type: 'system.estop', state: expect.objectContaining({ latched: true, reason: 'test' }) }));
  });

  it('closes only the socket that sends a 5 MiB frame; the host and its runs go on', async () => {
    const model = await modelServer();
    const serve = await startServe(tempDir(), ['--model-url', model.url, '--workspace', tempDir(), '--policy', 'permissive']);
    const operator = await openSocket(serve);
    const started = await operator.call('runs.start', { goal: 'keep going' });
    expect(started.ok, JSON.stringify(started.error)).toBe(true);
    const { runId } = started.value as { runId: string };
    await expect.poll(async () => ((await operator.call('approvals.list')).value as ApprovalRequest[]).length, { timeout: 15_000 }).toBe(1);

    const attacker = await openSocket(serve);
    const closed = new Promise<number>((resolve) => attacker.ws.once('close', (code) => resolve(code)));
    attacker.ws.on('error', () => undefined);
    attacker.ws.send(Buffer.alloc(5 * 1024 * 1024, 0x61));
    // 1009 (too big) when the close frame arrives; 1006 when the host drops the connection while the 5 MiB are still being sent.
    expect([1006, 1009]).toContain(await closed);

    const [request] = (await operator.call('approvals.list')).value as ApprovalRequest[];
    expect(await operator.call('approvals.decide', { approvalId: request?.id, actionHash: request?.actionHash, decision: { verdict: 'approve' } })).toMatchObject({ ok: true });
    await expect.poll(async () => ((await operator.call('runs.get', { runId })).value as { run: { status: string } }).run.status, { timeout: 15_000 }).toBe('completed');
    expect(await (await openSocket(serve)).call('app.info')).toMatchObject({ ok: true });
    expect(serve.child.exitCode).toBeNull();
  });

  it('sends the key given at start only to its own origin; another origin gets a key only when given one', async () => {
    const own = await modelServer();
    const other = await modelServer();
    // --trust-ui: a run against another model server is a widening the operator lets the page make here.
    const serve = await startServe(tempDir(), ['--model-url', own.url, '--api-key', 'SECRETKEY123', '--workspace', tempDir(), '--trust-ui']);
    const socket = await openSocket(serve);
    const authorizations = (model: ScriptedModelServer) => model.requests.filter((request) => request.path.startsWith('/v1/')).map((request) => request.headers.authorization);

    expect(await socket.call('endpoint.probe', { modelUrl: own.url })).toMatchObject({ ok: true });
    expect(await socket.call('endpoint.probe', { modelUrl: other.url })).toMatchObject({ ok: true });
    expect(authorizations(own).length).toBeGreaterThan(0);
    expect(authorizations(own).every((header) => header === 'Bearer SECRETKEY123')).toBe(true);
    expect(authorizations(other).length).toBeGreaterThan(0);
    expect(authorizations(other).some((header) => header?.includes('SECRETKEY123'))).toBe(false);

    expect(await socket.call('runs.start', { goal: 'elsewhere', modelUrl: other.url })).toMatchObject({ ok: true });
    expect(authorizations(other).some((header) => header?.includes('SECRETKEY123'))).toBe(false);

    expect(await socket.call('endpoint.probe', { modelUrl: other.url, apiKey: 'OTHERKEY-4567' })).toMatchObject({ ok: true });
    expect(authorizations(other).at(-1)).toBe('Bearer OTHERKEY-4567');
    expect(authorizations(own).every((header) => header === 'Bearer SECRETKEY123')).toBe(true);
  });
});
