import { describe, expect, it, vi } from 'vitest';
import type { IpcMain } from 'electron';
import { IPC_PREFIX } from '../../src/shared/ipc/contract';
import { registerIpcHandlers } from '../../src/main/ipc';
import { useServices } from '../support/runtime';

const openServices = useServices();
const APP_URL = 'file:///opt/archon/out/renderer/index.html';

function bind() {
  const handlers = new Map<string, (event: unknown, input: unknown) => Promise<unknown>>();
  const ipcMain = { handle: vi.fn((channel, handler) => handlers.set(channel, handler)), removeHandler: vi.fn((channel) => handlers.delete(channel)) };
  const { runtime, services } = openServices();
  const unregister = registerIpcHandlers(ipcMain as unknown as IpcMain, services.handlers, APP_URL);
  const call = (name: string, input: unknown, frame: unknown = { url: APP_URL, parent: null }) => {
    const handler = handlers.get(IPC_PREFIX + name);
    if (!handler) throw new Error(`no handler for ${name}`);
    return handler({ senderFrame: frame }, input);
  };
  return { call, handlers, runtime, unregister };
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

  it('unbinds every handler it bound', () => {
    const { handlers, unregister } = bind();
    expect(handlers.size).toBeGreaterThan(0);
    unregister();
    expect(handlers.size).toBe(0);
  });
});
