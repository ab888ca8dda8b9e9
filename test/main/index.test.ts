import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type * as AppServicesModule from '../../src/core/app-services';
import type { AppServicesOptions } from '../../src/core/app-services';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../../src/shared/csp';
import { COMMAND_NAMES, IPC_PREFIX } from '../../src/shared/ipc/contract';
import { startModelServer, type ScriptedModelServer } from '../kit/scripted-model-server';
import { seedRuns } from '../support/stored-runs';
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
  get safeStorage() {
    return fake.safeStorage;
  },
  get dialog() {
    return fake.dialog;
  },
  get Notification() {
    return fake.Notification;
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
/** Whether this test booted main: a test that did not leaves the last test's app alone, which that test closed. */
let booted = false;
afterEach(async () => {
  vi.unstubAllEnvs();
  if (!booted) return;
  booted = false;
  fake.app.emit('window-all-closed');
  if (fake.windows.length > 0) await vi.waitFor(() => expect(fake.app.quit).toHaveBeenCalled(), { timeout: 20_000 });
});

async function bootMain(gotLock: boolean, options: { userData?: string; dialogResponse?: number; keychain?: boolean; keychainBackend?: string; notifications?: boolean } = {}) {
  fake = createFakeElectron({ gotLock, ...options, userData: options.userData ?? tempDir() });
  booted = true;
  await import('../../src/main/index');
  await new Promise((resolve) => setImmediate(resolve));
  return fake;
}

/** Closes the app as its last window would, and waits until it has let go of the data dir. */
async function quitMain(electron: typeof fake): Promise<void> {
  electron.app.emit('window-all-closed');
  await vi.waitFor(() => expect(electron.app.quit).toHaveBeenCalled());
  vi.resetModules();
}

/** A command as the app's own page sends it. */
function invoke(electron: typeof fake, name: string, input: unknown): Promise<unknown> {
  const handler = electron.handlers.get(IPC_PREFIX + name);
  if (!handler) throw new Error(`no handler for ${name}`);
  return handler({ senderFrame: { url: String(electron.windows[0]?.loadURL.mock.calls[0]?.[0]), parent: null } }, input);
}

const models: ScriptedModelServer[] = [];
afterEach(async () => {
  await Promise.all(models.splice(0).map((model) => model.close()));
});
async function modelServer(): Promise<ScriptedModelServer> {
  const model = await startModelServer({ reply: [] });
  models.push(model);
  return model;
}
const authorizations = (model: ScriptedModelServer) => model.requests.filter((request) => request.path.startsWith('/v1/')).map((request) => request.headers.authorization);

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

  it('asks in a native dialog before a change that widens what agents may do: Cancel changes nothing, Allow applies it', async () => {
    const refusing = await bootMain(true, { dialogResponse: 0 });
    expect(await invoke(refusing, 'settings.update', { toolApproval: { run_command: 'never' } })).toMatchObject({ ok: false, error: { code: 'NOT_CONFIRMED', message: expect.stringContaining('run_command') } });
    expect(refusing.dialog.showMessageBox).toHaveBeenCalledWith(refusing.windows[0], expect.objectContaining({ buttons: ['Cancel', 'Allow'], cancelId: 0, detail: expect.stringContaining('approval of run_command from "default" to "never"') }));
    expect(await invoke(refusing, 'settings.get', {})).toMatchObject({ ok: true, value: { toolApproval: {} } });
    expect(await invoke(refusing, 'settings.update', { toolApproval: { run_command: 'always' }, theme: 'dark' })).toMatchObject({ ok: true, value: { toolApproval: { run_command: 'always' } } });
    expect(refusing.dialog.showMessageBox).toHaveBeenCalledTimes(1);
    await quitMain(refusing);

    const allowing = await bootMain(true, { dialogResponse: 1 });
    expect(await invoke(allowing, 'settings.update', { allowNetwork: true, sandbox: 'off' })).toMatchObject({ ok: true, value: { allowNetwork: true, sandbox: 'off' } });
    expect(allowing.dialog.showMessageBox).toHaveBeenCalledTimes(1);
  });

  it('keeps an API key sealed by safeStorage, bound to the origin it was given for', async () => {
    const own = await modelServer();
    const other = await modelServer();
    const userData = tempDir();
    const first = await bootMain(true, { userData });
    expect(await invoke(first, 'endpoint.probe', { modelUrl: own.url, apiKey: 'APPKEY-123456' })).toMatchObject({ ok: true });
    expect(first.safeStorage.encryptString).toHaveBeenCalledWith('APPKEY-123456');
    expect(readFileSync(join(userData, 'api-keys.json'), 'utf8')).not.toContain('APPKEY-123456');
    await quitMain(first);

    const second = await bootMain(true, { userData });
    expect(await invoke(second, 'endpoint.probe', { modelUrl: own.url })).toMatchObject({ ok: true });
    expect(await invoke(second, 'endpoint.probe', { modelUrl: other.url })).toMatchObject({ ok: true });
    expect(authorizations(own).every((header) => header === 'Bearer APPKEY-123456')).toBe(true);
    expect(authorizations(own).length).toBeGreaterThan(2);
    expect(authorizations(other).some((header) => header?.includes('APPKEY-123456'))).toBe(false);
  });

  it('keeps a key in memory only where the keychain cannot encrypt', async () => {
    const own = await modelServer();
    const userData = tempDir();
    const electron = await bootMain(true, { userData, keychain: false });
    expect(await invoke(electron, 'endpoint.probe', { modelUrl: own.url, apiKey: 'MEMORYKEY-123456' })).toMatchObject({ ok: true });
    expect(authorizations(own).every((header) => header === 'Bearer MEMORYKEY-123456')).toBe(true);
    expect(existsSync(join(userData, 'api-keys.json'))).toBe(false);
    expect(electron.safeStorage.encryptString).not.toHaveBeenCalled();
  });

  // getSelectedStorageBackend and its basic_text fallback exist on Linux alone.
  it.runIf(process.platform === 'linux')('keeps a key in memory only, and says so in Settings, where Linux has no keyring and safeStorage would seal with a fixed password', async () => {
    const own = await modelServer();
    const userData = tempDir();
    const electron = await bootMain(true, { userData, keychainBackend: 'basic_text', dialogResponse: 1 });
    expect(await invoke(electron, 'endpoint.probe', { modelUrl: own.url, apiKey: 'BASICTEXT-123456' })).toMatchObject({ ok: true });
    expect(authorizations(own).every((header) => header === 'Bearer BASICTEXT-123456')).toBe(true);
    expect(existsSync(join(userData, 'api-keys.json'))).toBe(false);
    expect(electron.safeStorage.encryptString).not.toHaveBeenCalled();
    expect(await invoke(electron, 'settings.update', { mcpServers: { files: { command: 'npx', env: { TOKEN: 'MCPSECRET-123456' } } } })).toMatchObject({ ok: false, error: { code: 'CONFIG_INVALID', message: expect.stringContaining('sealed by the OS keychain') } });
    expect(await invoke(electron, 'app.info', {})).toMatchObject({ ok: true, value: { keyStorageNote: expect.stringContaining('No keyring') } });
  });

  it("notifies each run that lands in the inbox between two of the page's reads while the window is not focused, and none while it is; a click brings the window back", async () => {
    const userData = tempDir();
    const electron = await bootMain(true, { userData, notifications: true });
    const [window] = electron.windows;
    const landed = (goal: string) => seedRuns(userData, [{ goal, status: 'completed', dispatch: { scheduleId: 'nightly', firedAt: '2030-01-02T03:00:00.000Z' } }]);
    window?.isFocused.mockReturnValue(false);
    landed('Check the nightly backups');
    expect(await invoke(electron, 'inbox.list', {})).toMatchObject({ ok: true, value: [{ run: { goal: 'Check the nightly backups' } }] });
    landed('Rotate the staging certificates');
    expect(await invoke(electron, 'inbox.list', {})).toMatchObject({ ok: true, value: [{ run: { goal: 'Rotate the staging certificates' } }, {}] });
    expect(electron.notices.map((notice) => notice.content)).toEqual([{ title: 'Archon: a run is in your inbox', body: 'Rotate the staging certificates' }]);

    window?.isMinimized.mockReturnValue(true);
    electron.notices[0]?.emit('click');
    expect(window?.restore).toHaveBeenCalled();
    expect(window?.focus).toHaveBeenCalled();

    window?.isFocused.mockReturnValue(true);
    landed('Summarise the overnight failures');
    expect(await invoke(electron, 'inbox.list', {})).toMatchObject({ ok: true, value: [{ run: { goal: 'Summarise the overnight failures' } }, {}, {}] });
    expect(electron.notices).toHaveLength(1);
  });
});
