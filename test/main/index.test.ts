import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import type * as AppServicesModule from '../../src/core/app-services';
import type { AppServicesOptions } from '../../src/core/app-services';
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

const appServices = vi.hoisted(() => ({ options: [] as unknown[] }));
vi.mock('../../src/core/app-services', async (original) => {
  const actual = await original<typeof AppServicesModule>();
  return {
    createAppServices: (options: AppServicesOptions) => {
      appServices.options.push(options);
      return actual.createAppServices(options);
    },
  };
});

beforeEach(() => {
  appServices.options.length = 0;
  vi.resetModules();
  vi.stubEnv('ARCHON_DATA_DIR', undefined);
});
afterEach(() => {
  fake.app.emit('window-all-closed');
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

  it("starts tool workers under Node's permission model (the app's files readable) and hides the home, data and key folders from commands", async () => {
    const electron = await bootMain(true);
    const options = appServices.options[0] as { readableRoots: string[] | null; hiddenFolders: string[] };
    expect(options.readableRoots).toEqual(['/opt/Archon/resources/app.asar']);
    expect(options.hiddenFolders).toEqual(expect.arrayContaining([electron.app.getPath(), homedir()]));
    expect(options.hiddenFolders).toHaveLength(3);
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
