import { EventEmitter } from 'node:events';
import { vi } from 'vitest';

/** Just enough of Electron's main-process API to load src/main and watch what it does. */
export function createFakeElectron(options: { gotLock: boolean; userData: string; keychain?: boolean; dialogResponse?: number }) {
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
    readonly loadURL = vi.fn(async (_url: string) => undefined);
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
  /** A stand-in keychain: reversible, and never the plain text. */
  const seal = (bytes: Buffer) => Buffer.from(bytes.map((byte) => byte ^ 0x5a));
  const safeStorage = {
    isEncryptionAvailable: vi.fn(() => options.keychain ?? true),
    encryptString: vi.fn((plain: string) => seal(Buffer.from(plain, 'utf8'))),
    decryptString: vi.fn((sealed: Buffer) => seal(sealed).toString('utf8')),
  };
  /** The operator's answer to the native dialog: index 1 is "Allow". */
  const dialog = { showMessageBox: vi.fn(async (..._args: unknown[]) => ({ response: options.dialogResponse ?? 0, checkboxChecked: false })) };
  return { app, session, ipcMain, utilityProcess, safeStorage, dialog, BrowserWindow: FakeBrowserWindow, handlers, windows };
}
