import type { App, Session, WebContents } from 'electron';

/** The window's webPreferences: a sandboxed, isolated renderer that reaches Node only through the preload. */
export function secureWebPreferences(preloadPath: string) {
  return {
    preload: preloadPath,
    contextIsolation: true,
    sandbox: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    webviewTag: false,
    spellcheck: false,
  } as const;
}

/** Navigation and new windows are denied outright: the app is one page, loaded once. */
export function lockDownContents(contents: WebContents): void {
  contents.on('will-navigate', (event) => event.preventDefault());
  contents.on('will-redirect', (event) => event.preventDefault());
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
}

/** Camera, microphone, notifications, geolocation…: every permission request is refused. */
export function denyPermissions(session: Session): void {
  session.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  session.setPermissionCheckHandler(() => false);
}

export function hardenApp(app: App): void {
  app.on('web-contents-created', (_event, contents) => lockDownContents(contents));
}
