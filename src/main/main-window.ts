import type { BrowserWindow, BrowserWindowConstructorOptions } from 'electron';
import { secureWebPreferences } from './security';

export interface MainWindowPaths {
  preload: string;
  appUrl: string;
}

type BrowserWindowClass = new (options: BrowserWindowConstructorOptions) => BrowserWindow;

export function createMainWindow(BrowserWindowCtor: BrowserWindowClass, paths: MainWindowPaths): BrowserWindow {
  const window = new BrowserWindowCtor({
    width: 1360,
    height: 880,
    minWidth: 900,
    minHeight: 600,
    show: false,
    title: 'Archon',
    backgroundColor: '#0f1115',
    webPreferences: secureWebPreferences(paths.preload),
  });
  window.once('ready-to-show', () => window.show());
  void window.loadURL(paths.appUrl);
  return window;
}
