import { EventEmitter } from 'node:events';
import { vi } from 'vitest';

/** Just enough of Electron's main-process API to load src/main and watch what it does. */
export function createFakeElectron(options: { gotLock: boolean; userData: string }) {
  const handlers = new Map<string, (event: unknown, input: unknown) => Promise<unknown>>();
  const windows: FakeBrowserWindow[] = [];
  const app = Object.assign(new EventEmitter(), {
    requestSingleInstanceLock: vi.fn(() => options.gotLock),
    quit: vi.fn(),
    whenReady: vi.fn(() => Promise.resolve()),
    getPath: vi.fn(() => options.userData),
    getVersion: vi.fn(() => '0.0.0-test'),
    getAppPath: vi.fn(() => '/opt/Archon/resources/app.asar'),
    isPackaged: false,
  });
  const session = {
    defaultSession: { setPermissionRequestHandler: vi.fn(), setPermissionCheckHandler: vi.fn() },
  };
  const ipcMain = {
    handle: vi.fn((channel: string, handler: (event: unknown, input: unknown) => Promise<unknown>) => handlers.set(channel, handler)),
    removeHandler: vi.fn((channel: string) => handlers.delete(channel)),
  };
  class FakeBrowserWindow extends EventEmitter {
    readonly webContents = Object.assign(new EventEmitter(), { send: vi.fn(), isDestroyed: () => false, setWindowOpenHandler: vi.fn() });
    readonly loadURL = vi.fn(async () => undefined);
    readonly show = vi.fn();
    readonly focus = vi.fn();
    readonly restore = vi.fn();
    readonly isMinimized = vi.fn(() => false);
    constructor(readonly options: Record<string, unknown>) {
      super();
      windows.push(this);
    }
  }
  const utilityProcess = { fork: vi.fn() };
  return { app, session, ipcMain, utilityProcess, BrowserWindow: FakeBrowserWindow, handlers, windows };
}
