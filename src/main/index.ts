import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { app, BrowserWindow, ipcMain, session } from 'electron';
import { resolveDataDir } from '../core/data-dir';
import { createRuntime } from '../core/runtime';
import { forwardEvent, registerIpcHandlers } from './ipc';
import { createMainWindow } from './main-window';
import { denyPermissions, hardenApp } from './security';

const here = import.meta.dirname;

function appUrl(): string {
  const devServer = process.env.ELECTRON_RENDERER_URL;
  return devServer && !app.isPackaged ? devServer : pathToFileURL(join(here, '../renderer/index.html')).href;
}

function start(): void {
  denyPermissions(session.defaultSession);
  const runtime = createRuntime({
    dataDir: resolveDataDir(process.env.ARCHON_DATA_DIR ?? app.getPath('userData')),
    version: app.getVersion(),
    host: 'electron',
  });
  const url = appUrl();
  const window = createMainWindow(BrowserWindow, { preload: join(here, '../preload/index.cjs'), appUrl: url });
  const unregister = registerIpcHandlers(ipcMain, runtime.handlers, url);
  const unsubscribe = runtime.bus.subscribe((event) => forwardEvent(window.webContents, event));
  app.on('second-instance', () => {
    if (window.isMinimized()) window.restore();
    window.focus();
  });
  app.on('window-all-closed', () => {
    unsubscribe();
    unregister();
    runtime.close();
    app.quit();
  });
}

if (app.requestSingleInstanceLock()) {
  hardenApp(app);
  void app.whenReady().then(start);
} else {
  app.quit();
}
