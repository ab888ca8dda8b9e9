import { BRIDGE_GLOBAL, type ArchonBridge } from '../../../shared/ipc/bridge';
import { createArchonClient, type ArchonClient } from '../../../shared/ipc/client';
import { createIpcTransport } from './ipc-transport';
import { createWebSocketTransport } from './ws-transport';

/** In Electron the preload provides the bridge; in a browser the page talks to `archon serve`. */
export function connect(): ArchonClient {
  const bridge = (window as unknown as Record<string, ArchonBridge | undefined>)[BRIDGE_GLOBAL];
  return createArchonClient(bridge ? createIpcTransport(bridge) : createWebSocketTransport(window.location));
}
