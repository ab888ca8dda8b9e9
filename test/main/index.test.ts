import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../../src/shared/csp';
import { COMMAND_NAMES, IPC_PREFIX } from '../../src/shared/ipc/contract';
import { useTempDirs } from '../support/temp-dir';
import { createFakeElectron } from './fake-electron';

const tempDir = useTempDirs();
let fake: ReturnType<typeof createFakeElectron>;

// The mock is created once per file; its getters follow the fake of the current test.
vi.mock('electron', () => ({
  get app() {
    return fake.app;
  },
  get session() {
    return fake.session;
  },
  get ipcMain() {
    return fake.ipcMain;
  },
  get BrowserWindow() {
    return fake.BrowserWindow;
  },
  get utilityProcess() {
    return fake.utilityProcess;
  },
}));

beforeEach(() => {
  vi.resetModules();
  vi.stubEnv('ARCHON_DATA_DIR', undefined);
});
afterEach(async () => {
  fake.app.emit('window-all-closed');
  if (fake.windows.length > 0) await vi.waitFor(() => expect(fake.app.quit).toHaveBeenCalled(), { timeout: 20_000 });
  vi.unstubAllEnvs();
});

async function bootMain(gotLock: boolean) {
  fake = createFakeElectron({ gotLock, userData: tempDir() });
  await import('../../src/main/index');
  await new Promise((resolve) => setImmediate(resolve));
  return fake;
}

describe('Electron main', () => {
  it('opens one sandboxed, context-isolated window with the preload and no Node in the page', async () => {
    const electron = await bootMain(true);
    expect(electron.windows).toHaveLength(1);
    const preferences = electron.windows[0]?.options.webPreferences as Record<string, unknown>;
    expect(preferences).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false, webSecurity: true, webviewTag: false });
    expect(String(preferences.preload)).toMatch(/preload[\\/]index\.cjs$/);
    expect(electron.windows[0]?.loadURL).toHaveBeenCalledWith(expect.stringMatching(/^file:.*renderer\/index\.html$/));
  });

  it('binds every command of the contract, and nothing else, to ipcMain.handle', async () => {
    const electron = await bootMain(true);
    expect([...electron.handlers.keys()].sort()).toEqual(COMMAND_NAMES.map((name) => IPC_PREFIX + name).sort());
  });

  it('denies every permission request and permission check', async () => {
    const electron = await bootMain(true);
    const requestHandler = electron.session.defaultSession.setPermissionRequestHandler.mock.calls[0]?.[0] as (c: unknown, p: string, cb: (ok: boolean) => void) => void;
    const callback = vi.fn();
    requestHandler({}, 'media', callback);
    expect(callback).toHaveBeenCalledWith(false);
    const checkHandler = electron.session.defaultSession.setPermissionCheckHandler.mock.calls[0]?.[0] as () => boolean;
    expect(checkHandler()).toBe(false);
  });

  it('denies navigation and window.open in every web contents it creates', async () => {
    const electron = await bootMain(true);
    const contents = Object.assign(new (await import('node:events')).EventEmitter(), { setWindowOpenHandler: vi.fn() });
    electron.app.emit('web-contents-created', {}, contents);
    for (const event of ['will-navigate', 'will-redirect', 'will-attach-webview']) {
      const preventDefault = vi.fn();
      contents.emit(event, { preventDefault });
      expect(preventDefault, event).toHaveBeenCalled();
    }
    const openHandler = contents.setWindowOpenHandler.mock.calls[0]?.[0] as () => unknown;
    expect(openHandler()).toEqual({ action: 'deny' });
  });

  it('starts the auditor as a utility process by path, asks it for the Audit view, and drains it before quitting', async () => {
    const electron = await bootMain(true);
    expect(electron.utilityProcess.fork).toHaveBeenCalledWith(expect.stringMatching(/node[\\/]auditor\.js$/), [electron.app.getPath()], expect.objectContaining({ serviceName: 'Archon auditor' }));
    const appUrl = (electron.windows[0]?.loadURL.mock.calls as unknown as string[][])[0]?.[0];
    const verify = electron.handlers.get(`${IPC_PREFIX}audit.verify`);
    expect(await verify?.({ senderFrame: { parent: null, url: appUrl } }, {})).toEqual({ ok: true, value: { intact: true, records: 0 } });
    const auditor = electron.utilityProcess.fork.mock.results[0]?.value as { child: ChildProcess };
    const exited = new Promise<number | null>((resolve) => auditor.child.once('exit', resolve));
    electron.app.emit('window-all-closed');
    expect(await exited).toBe(0);
    await vi.waitFor(() => expect(electron.app.quit).toHaveBeenCalled());
  });

  it('quits at once when another instance holds the single-instance lock', async () => {
    const electron = await bootMain(false);
    expect(electron.app.quit).toHaveBeenCalled();
    expect(electron.windows).toHaveLength(0);
  });

  it('ships the strict CSP in the page itself', () => {
    const html = readFileSync(new URL('../../src/renderer/index.html', import.meta.url), 'utf8');
    const meta = /http-equiv="Content-Security-Policy"\s+content="([^"]+)"/.exec(html)?.[1];
    expect(meta).toBe(CONTENT_SECURITY_POLICY);
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-(inline|eval)/);
  });
});
