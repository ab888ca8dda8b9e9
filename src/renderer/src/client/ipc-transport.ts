import type { ArchonBridge } from '../../../shared/ipc/bridge';
import type { ConnectionState, Transport } from '../../../shared/ipc/client';

/** Electron: commands and events through the preload's bridge. The connection is always up. */
export function createIpcTransport(bridge: ArchonBridge): Transport {
  return {
    invoke: (name, input) => bridge.commands[name](input),
    subscribe: (listener) => bridge.onEvent(listener),
    onConnectionChange(listener: (state: ConnectionState) => void) {
      listener('connected');
      return () => undefined;
    },
  };
}
