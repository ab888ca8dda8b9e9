import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { IpcMain } from 'electron';
import { IPC_PREFIX } from '../../src/shared/ipc/contract';
import { registerIpcHandlers } from '../../src/main/ipc';
import type { CommandHandlers } from '../../src/shared/ipc/dispatch';
import { useServices } from '../support/runtime';

const openServices = useServices();
const APP_URL = 'file:///opt/archon/out/renderer/index.html';
const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** A model server that takes requests and never answers them. */
async function silentModelServer(): Promise<{ url: string; requested: Promise<IncomingMessage> }> {
  let received: (request: IncomingMessage) => void = () => undefined;
  const requested = new Promise<IncomingMessage>((resolve) => (received = resolve));
  const server = createServer((request) => received(request));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, requested };
}

function bind() {
  const handlers = new Map<string, (event: unknown, input: unknown) => Promise<unknown>>();
  const ipcMain = { handle: vi.fn((channel, handler) => handlers.set(channel, handler)), removeHandler: vi.fn((channel) => handlers.delete(channel)) };
  const { runtime, services } = openServices();
  const signals: AbortSignal[] = [];
  const listRuns = services.handlers['runs.list'];
  const commands: CommandHandlers = { ...services.handlers, 'runs.list': (input, context) => (signals.push(context.signal), listRuns(input, context)) };
  const unregister = registerIpcHandlers(ipcMain as unknown as IpcMain, commands, APP_URL, services.estop);
  const call = (name: string, input: unknown, frame: unknown = { url: APP_URL, parent: null }) => {
    const handler = handlers.get(IPC_PREFIX + name);
    if (!handler) throw new Error(`no handler for ${name}`);
    return handler({ senderFrame: frame }, input);
  };
  return { call, handlers, runtime, unregister, signals };
}

describe('main-process IPC handlers', () => {
  it('answers a valid command from the app window', async () => {
    const { call } = bind();
    expect(await call('settings.update', { theme: 'light' })).toMatchObject({ ok: true, value: { theme: 'light' } });
  });

  it('answers a payload that breaks the schema with a typed error, and keeps serving', async () => {
    const { call, runtime } = bind();
    expect(await call('settings.update', { theme: 42 })).toMatchObject({ ok: false, error: { code: 'VALIDATION_FAILED', message: expect.stringContaining('theme') } });
    expect(await call('estop.trigger', { reason: 'x'.repeat(10_000) })).toMatchObject({ ok: false, error: { code: 'VALIDATION_FAILED' } });
    expect(runtime.store.estopState().latched).toBe(false);
    expect(await call('estop.status', undefined)).toMatchObject({ ok: true });
  });

  it.each([
    ['an iframe', { url: APP_URL, parent: {} }],
    ['a foreign page', { url: 'https://evil.example/', parent: null }],
    ['another local file', { url: 'file:///tmp/evil.html', parent: null }],
    ['no frame at all', null],
  ])('refuses a call from %s', async (_what, frame) => {
    const { call, runtime } = bind();
    expect(await call('estop.reset', {}, frame)).toMatchObject({ ok: false, error: { code: 'IPC_SENDER_REJECTED' } });
    expect(runtime.store.estopState().since).toBeNull();
  });

  it('gives each command a signal that fires on the emergency stop, and a fresh one once re-armed', async () => {
    const { call, signals } = bind();
    await call('runs.list', {});
    expect(signals[0]?.aborted).toBe(false);
    await call('estop.trigger', { reason: 'stop everything' });
    expect(signals[0]?.reason).toMatchObject({ code: 'ESTOP_LATCHED', message: expect.stringContaining('stop everything') });
    await call('estop.reset', {});
    await call('runs.list', {});
    expect(signals[1]?.aborted).toBe(false);
  });

  it('ends a command under way when the emergency stop is pressed, and refuses a new one until re-armed', async () => {
    const { call } = bind();
    const model = await silentModelServer();
    const probing = call('endpoint.probe', { modelUrl: model.url });
    const request = await model.requested;
    const abandoned = new Promise((resolve) => request.socket.once('close', resolve));

    expect(await call('estop.trigger', { reason: 'probe hangs' })).toMatchObject({ ok: true });
    expect(await probing).toMatchObject({ ok: false, error: { code: 'ESTOP_LATCHED', message: expect.stringContaining('Re-arm') } });
    await abandoned;
    expect(await call('endpoint.probe', { modelUrl: model.url })).toMatchObject({ ok: false, error: { code: 'ESTOP_LATCHED' } });

    expect(await call('estop.reset', {})).toMatchObject({ ok: true });
    const again = call('endpoint.probe', { modelUrl: model.url });
    await call('estop.trigger', { reason: 'again' });
    expect(await again).toMatchObject({ ok: false, error: { code: 'ESTOP_LATCHED', message: expect.stringContaining('again') } });
  });

  it('unbinds every handler it bound', () => {
    const { handlers, unregister } = bind();
    expect(handlers.size).toBeGreaterThan(0);
    unregister();
    expect(handlers.size).toBe(0);
  });
});
