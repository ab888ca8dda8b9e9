import { fork } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { basename } from 'node:path';
import { vi } from 'vitest';
import { builtFile } from '../support/built';

/**
 * Electron's utilityProcess.fork, played by a real Node child process of the built entry of the same
 * name (out/node/…): the child sees no parentPort and talks over process.send, as under the CLI.
 */
function forkUtilityProcess(modulePath: string, args: string[] = []) {
  const child = fork(builtFile(`node/${basename(modulePath)}`), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'json' });
  return Object.assign(new EventEmitter(), {
    pid: child.pid,
    child,
    postMessage: (message: unknown) => child.connected && child.send(message as object),
    kill: () => child.kill(),
  }).on('newListener', function relay(this: EventEmitter, event: string) {
    if (event === 'message' && this.listenerCount('message') === 0) child.on('message', (message) => this.emit('message', message));
    if (event === 'exit' && this.listenerCount('exit') === 0) child.on('exit', (code) => this.emit('exit', code ?? 0));
  });
}

/** Just enough of Electron's main-process API to load src/main and watch what it does. */
export function createFakeElectron(options: { gotLock: boolean; userData: string; keychain?: boolean; keychainBackend?: string; dialogResponse?: number; notifications?: boolean }) {
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
    readonly isFocused = vi.fn(() => true);
    constructor(readonly options: Record<string, unknown>) {
      super();
      windows.push(this);
    }
  }
  const utilityProcess = { fork: vi.fn(forkUtilityProcess) };
  /** A stand-in keychain: reversible, and never the plain text. */
  const seal = (bytes: Buffer) => Buffer.from(bytes.map((byte) => byte ^ 0x5a));
  const safeStorage = {
    isEncryptionAvailable: vi.fn(() => options.keychain ?? true),
    encryptString: vi.fn((plain: string) => seal(Buffer.from(plain, 'utf8'))),
    decryptString: vi.fn((sealed: Buffer) => seal(sealed).toString('utf8')),
    /** On Linux, what seals: a keyring, or `basic_text` (a password written into Chromium) when none runs. */
    getSelectedStorageBackend: vi.fn(() => options.keychainBackend ?? 'gnome_libsecret'),
  };
  /** The operator's answer to the native dialog: index 1 is "Allow". */
  const dialog = { showMessageBox: vi.fn(async (..._args: unknown[]) => ({ response: options.dialogResponse ?? 0, checkboxChecked: false })) };
  /** The notifications shown, in order; a test clicks one by emitting `click` on it. */
  const notices: FakeNotification[] = [];
  /** Desktop notifications: unless asked for, none on this machine, as where the system has no notification service. */
  class FakeNotification extends EventEmitter {
    static readonly isSupported = vi.fn(() => options.notifications ?? false);
    readonly show = vi.fn(() => {
      notices.push(this);
    });
    constructor(readonly content: { title: string; body: string }) {
      super();
    }
  }
  return { app, session, ipcMain, utilityProcess, safeStorage, dialog, Notification: FakeNotification, BrowserWindow: FakeBrowserWindow, handlers, windows, notices };
}
