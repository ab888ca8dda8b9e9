import { contextBridge, ipcRenderer } from 'electron';
import type { ArchonBridge } from '../shared/ipc/bridge';
import { BRIDGE_GLOBAL } from '../shared/ipc/bridge';
import { COMMAND_NAMES, IPC_EVENT_CHANNEL, IPC_PREFIX } from '../shared/ipc/contract';

/** Verbs only: one function per command of the contract, and an event subscription. No raw ipcRenderer. */
const bridge: ArchonBridge = {
  commands: Object.fromEntries(
    COMMAND_NAMES.map((name) => [name, (input: unknown) => ipcRenderer.invoke(IPC_PREFIX + name, input)]),
  ) as ArchonBridge['commands'],
  onEvent(listener) {
    const handle = (_event: Electron.IpcRendererEvent, payload: unknown) => listener(payload);
    ipcRenderer.on(IPC_EVENT_CHANNEL, handle);
    return () => ipcRenderer.off(IPC_EVENT_CHANNEL, handle);
  },
};

contextBridge.exposeInMainWorld(BRIDGE_GLOBAL, bridge);
