import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { app, BrowserWindow, dialog, ipcMain, Notification, safeStorage, session, utilityProcess } from 'electron';
import { foldersHiddenFromTools } from '../core/tools/hidden-folders';
import { createAppServices } from '../core/app-services';
import { supervisedAuditorClient } from '../core/audit/auditor-supervisor';
import { resolveDataDir } from '../core/data-dir';
import { ApiKeys, type SecretVault } from '../core/secrets/api-keys';
import { resolveModelUrl } from '../shared/model-presets';
import { createRuntime } from '../core/runtime';
import { forwardEvent, registerIpcHandlers } from './ipc';
import { approvalNotifier } from './approval-notifier';
import { withArrivalNotices } from './arrival-notices';
import { forkAuditorUtility } from './auditor-launcher';
import { engineUtilityLauncher } from './engine-launcher';
import { createMainWindow } from './main-window';
import { dialogConfirmation } from './operator-dialog';
import { denyPermissions, hardenApp } from './security';
import { createUtilityProcessLauncher } from './utility-process-launcher';
import { safeStorageVault } from './safe-storage-vault';
import { bringBack, windowNotifier } from './window-notice';

const here = import.meta.dirname;

function appUrl(): string {
  const devServer = process.env.ELECTRON_RENDERER_URL;
  return devServer && !app.isPackaged ? devServer : pathToFileURL(join(here, '../renderer/index.html')).href;
}

/** Keys saved through the OS keychain (in memory only where it is unavailable), and OPENAI_API_KEY for the configured server. */
function openApiKeys(runtime: ReturnType<typeof createRuntime>, vault: SecretVault | null): ApiKeys {
  const apiKeys = vault ? ApiKeys.saved(runtime.dataDir, runtime.store.secrets, vault) : new ApiKeys(runtime.store.secrets);
  const fromEnvironment = process.env.OPENAI_API_KEY;
  if (fromEnvironment) apiKeys.remember(resolveModelUrl(runtime.store.getSettings().modelUrl), fromEnvironment);
  return apiKeys;
}

function start(): void {
  denyPermissions(session.defaultSession);
  const dataDir = resolveDataDir(process.env.ARCHON_DATA_DIR ?? app.getPath('userData'));
  const runtime = createRuntime({ dataDir });
  // The auditor's own process, with the same 0600 key the CLI uses, so `archon audit verify` checks the app's log too.
  const { client: auditor } = supervisedAuditorClient(() => forkAuditorUtility(utilityProcess.fork, join(here, '../node/auditor.js'), dataDir), runtime, (message) =>
    runtime.log.error({ auditor: message }, 'the auditor reported a problem'),
  );
  const shown: { window?: BrowserWindow } = {};
  const { vault, note: keyStorageNote } = safeStorageVault(safeStorage);
  const services = createAppServices({
    runtime,
    host: 'electron',
    version: app.getVersion(),
    audit: auditor,
    launcher: createUtilityProcessLauncher(utilityProcess.fork),
    executorEntry: join(here, '../node/executor.js'),
    // Tool workers run under Node's permission model, as in the CLI: they may read the app itself, the workspace and their temp folder.
    readableRoots: [app.getAppPath()],
    hiddenFolders: foldersHiddenFromTools(dataDir),
    apiKeys: openApiKeys(runtime, vault),
    vault,
    keyStorageNote,
    confirmation: dialogConfirmation(dialog, () => shown.window),
    engineLauncher: engineUtilityLauncher(utilityProcess.fork, join(here, '../node/engine.js')),
  });
  const url = appUrl();
  const window = createMainWindow(BrowserWindow, { preload: join(here, '../preload/index.cjs'), appUrl: url });
  shown.window = window;
  const notify = windowNotifier(Notification, window);
  const unregister = registerIpcHandlers(ipcMain, withArrivalNotices(services.handlers, notify), url, services.estop);
  const notifyApproval = approvalNotifier(notify);
  const unsubscribe = runtime.bus.subscribe((event) => {
    forwardEvent(window.webContents, event);
    notifyApproval(event);
  });
  app.on('second-instance', () => bringBack(window));
  app.on('window-all-closed', () => {
    unsubscribe();
    unregister();
    void services
      .close()
      .then(() => {
        runtime.close();
        return auditor.drain();
      })
      .finally(() => app.quit());
  });
}

if (app.requestSingleInstanceLock()) {
  hardenApp(app);
  void app.whenReady().then(start);
} else {
  app.quit();
}
