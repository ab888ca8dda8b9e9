import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { planReply, startModelServer, type ScriptedModelServer } from '../../kit/scripted-model-server';
import { useServe, type ServeProcess } from '../../support/archon-process';
import { useBrowser } from '../../support/browser';
import { useTempDirs } from '../../support/temp-dir';

// A browser, a host and a run on a loaded 2-core machine: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });

const tempDir = useTempDirs();
const startServe = useServe();
const launchBrowser = useBrowser();
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** Another local server, on another port of 127.0.0.1, that keeps every request's headers. */
async function otherLocalServer(): Promise<{ url: string; seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = [];
  const server: Server = createServer((request, response) => {
    seen.push(request.headers);
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end('<p>another local app</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, seen };
}

async function modelServer(): Promise<ScriptedModelServer> {
  const model = await startModelServer({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'a', description: 'think' }]) : { content: 'done' }) });
  closers.push(() => model.close());
  return model;
}

function upgradeStatus(serve: ServeProcess, protocols: string[], headers: Record<string, string> = {}, path = '/ws'): Promise<number> {
  const ws = new WebSocket(`ws://127.0.0.1:${serve.url.port}${path}`, protocols, { origin: serve.origin, headers });
  return new Promise((resolve, reject) => {
    ws.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
    ws.once('open', () => {
      ws.close();
      resolve(101);
    });
    ws.once('error', reject);
  });
}

describe('archon serve keeps its token to itself', () => {
  it('sends no token to another port of 127.0.0.1 the same browser visits, and the UI still runs a goal', async () => {
    const model = await modelServer();
    const serve = await startServe(tempDir(), ['--model-url', model.url, '--workspace', tempDir()]);
    const other = await otherLocalServer();
    const context = await (await launchBrowser()).newContext({});
    closers.push(() => context.close());
    const page = await context.newPage();
    page.setDefaultTimeout(60_000);
    await page.goto(serve.url.href);
    await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
    expect(page.url()).not.toContain(serve.token);

    await page.getByLabel('Goal').fill('Think it through');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    for (const kind of ['plan', 'final answer']) await page.getByRole('dialog', { name: `Approval: ${kind}` }).getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('button', { name: /Think it through.*completed/ }).waitFor();

    await page.reload();
    await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();

    const visitor = await context.newPage();
    await visitor.goto(other.url);
    await visitor.evaluate((url) => fetch(url, { credentials: 'include' }), other.url);
    expect(other.seen.length).toBeGreaterThanOrEqual(2);
    for (const headers of other.seen) expect(JSON.stringify(headers)).not.toContain(serve.token);
    expect(await context.cookies()).toEqual([]);
  });

  it('refuses a WebSocket without the token (in its subprotocol, a bearer header or its own URL), with a wrong one or with only a cookie', async () => {
    const serve = await startServe(tempDir());
    expect(await upgradeStatus(serve, ['archon'])).toBe(401);
    expect(await upgradeStatus(serve, ['archon', 'archon-token.wrong'])).toBe(401);
    expect(await upgradeStatus(serve, ['archon'], {}, '/ws?token=wrong')).toBe(401);
    expect(await upgradeStatus(serve, ['archon'], { cookie: `archon_token=${serve.token}` })).toBe(401);
    expect(await upgradeStatus(serve, ['archon'], {}, `/ws?token=${serve.token}`)).toBe(101);
    expect(await upgradeStatus(serve, ['archon', `archon-token.${serve.token}`])).toBe(101);
    expect(await upgradeStatus(serve, [], { authorization: `Bearer ${serve.token}` })).toBe(101);
  });
});
