import { BRIDGE_GLOBAL, type ArchonBridge } from '../../../shared/ipc/bridge';
import { createArchonClient, type ArchonClient } from '../../../shared/ipc/client';
import { TOKEN_PARAM } from '../../../shared/ipc/ws-protocol';
import { createIpcTransport } from './ipc-transport';
import { createWebSocketTransport } from './ws-transport';

const TOKEN_KEY = 'archon.token';

/**
 * The host's token, taken out of the address bar (history, bookmarks, a shared screen) once read.
 * It is kept in this tab's session storage, which only this origin (scheme, host and port) can read,
 * so a reload stays connected; it never goes in a cookie, which every port of 127.0.0.1 would receive.
 */
function takeHostToken(): string {
  const address = new URL(window.location.href);
  const given = address.searchParams.get(TOKEN_PARAM);
  if (given !== null) {
    sessionStorage.setItem(TOKEN_KEY, given);
    address.searchParams.delete(TOKEN_PARAM);
    history.replaceState(history.state, '', address);
  }
  return sessionStorage.getItem(TOKEN_KEY) ?? '';
}

/** In Electron the preload provides the bridge; in a browser the page talks to `archon serve`. */
export function connect(): ArchonClient {
  const bridge = (window as unknown as Record<string, ArchonBridge | undefined>)[BRIDGE_GLOBAL];
  return createArchonClient(bridge ? createIpcTransport(bridge) : createWebSocketTransport(window.location, takeHostToken()));
}
