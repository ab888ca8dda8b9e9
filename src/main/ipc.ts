import type { IpcMain, IpcMainInvokeEvent, WebContents } from 'electron';
import { ArchonError, toErrorEnvelope } from '../shared/errors';
import { COMMAND_NAMES, IPC_EVENT_CHANNEL, IPC_PREFIX } from '../shared/ipc/contract';
import { dispatchCommand, type CommandHandlers } from '../shared/ipc/dispatch';
import type { ResultEnvelope } from '../shared/ipc/envelope';
import type { ArchonEvent } from '../shared/schemas/events';

/** Only the app's own top-level page may call the runtime; iframes and foreign pages may not. */
export function isTrustedSender(event: Pick<IpcMainInvokeEvent, 'senderFrame'>, appUrl: string): boolean {
  const frame = event.senderFrame;
  if (!frame || frame.parent !== null) return false;
  const allowed = new URL(appUrl);
  const actual = new URL(frame.url);
  return allowed.protocol === 'file:' ? actual.protocol === 'file:' && actual.pathname === allowed.pathname : actual.origin === allowed.origin;
}

/** What commands are stopped by: the emergency stop's root signal, read at each command (re-arming replaces it). */
export interface CommandStop {
  readonly signal: AbortSignal;
}

/**
 * Binds every command of the contract to `ipcMain.handle`; each payload is parsed by dispatchCommand,
 * and each command gets the stop's signal.
 */
export function registerIpcHandlers(ipcMain: IpcMain, handlers: CommandHandlers, appUrl: string, stop: CommandStop): () => void {
  for (const name of COMMAND_NAMES) {
    ipcMain.handle(IPC_PREFIX + name, async (event, input: unknown): Promise<ResultEnvelope<unknown>> => {
      if (!isTrustedSender(event, appUrl)) {
        const error = new ArchonError('IPC_SENDER_REJECTED', `Refused ${name}: the request did not come from Archon's own window.`);
        return { ok: false, error: toErrorEnvelope(error) };
      }
      return dispatchCommand(handlers, name, input, { signal: stop.signal });
    });
  }
  return () => {
    for (const name of COMMAND_NAMES) ipcMain.removeHandler(IPC_PREFIX + name);
  };
}

export function forwardEvent(contents: WebContents, event: ArchonEvent): void {
  if (!contents.isDestroyed()) contents.send(IPC_EVENT_CHANNEL, event);
}
