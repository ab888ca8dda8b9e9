import { ArchonError, toErrorEnvelope } from '../../../shared/errors';
import type { ConnectionState, Transport } from '../../../shared/ipc/client';
import { parseJsonOrUndefined } from '../../../shared/json';
import { ServerFrameSchema, TOKEN_PROTOCOL_PREFIX, WS_PATH, WS_PROTOCOL } from '../../../shared/ipc/ws-protocol';

const RECONNECT_DELAYS_MS = [250, 500, 1000, 2000, 5000];

/** The headless host: commands and events over one WebSocket, reconnecting with backoff; the token goes as a subprotocol. */
export function createWebSocketTransport(location: Pick<Location, 'protocol' | 'host'>, token: string): Transport {
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${WS_PATH}`;
  // The host's tokens are base64url; anything else could not be a subprotocol, and would make the constructor throw.
  const protocols = /^[\w-]+$/.test(token) ? [WS_PROTOCOL, `${TOKEN_PROTOCOL_PREFIX}${token}`] : [WS_PROTOCOL];
  const pending = new Map<number, (envelope: unknown) => void>();
  const eventListeners = new Set<(event: unknown) => void>();
  const stateListeners = new Set<(state: ConnectionState) => void>();
  let state: ConnectionState = 'connecting';
  let socket: WebSocket;
  let openWaiters: (() => void)[] = [];
  let nextId = 1;
  let attempt = 0;

  const setState = (next: ConnectionState) => {
    state = next;
    for (const listener of stateListeners) listener(next);
  };

  const failPending = (message: string) => {
    for (const [id, resolve] of pending) {
      resolve({ ok: false, error: toErrorEnvelope(new ArchonError('CANCELLED', message)) });
      pending.delete(id);
    }
  };

  const connect = () => {
    setState('connecting');
    socket = new WebSocket(url, protocols);
    socket.addEventListener('open', () => {
      attempt = 0;
      setState('connected');
      for (const resolve of openWaiters) resolve();
      openWaiters = [];
    });
    socket.addEventListener('message', (message) => {
      const frame = ServerFrameSchema.safeParse(parseJsonOrUndefined(String(message.data)));
      if (!frame.success) return;
      if ('event' in frame.data) {
        for (const listener of eventListeners) listener(frame.data.event);
      } else if (frame.data.id !== null) {
        pending.get(frame.data.id)?.(frame.data.result);
        pending.delete(frame.data.id);
      }
    });
    socket.addEventListener('close', () => {
      setState('disconnected');
      failPending('The connection to Archon was lost; try again once it is back.');
      const delay = RECONNECT_DELAYS_MS[Math.min(attempt, RECONNECT_DELAYS_MS.length - 1)];
      attempt++;
      setTimeout(connect, delay);
    });
  };
  connect();

  return {
    async invoke(name, input) {
      if (state !== 'connected') await new Promise<void>((resolve) => openWaiters.push(resolve));
      const id = nextId++;
      return new Promise((resolve) => {
        pending.set(id, resolve);
        socket.send(JSON.stringify({ id, command: name, input }));
      });
    },
    subscribe(listener) {
      eventListeners.add(listener);
      return () => eventListeners.delete(listener);
    },
    onConnectionChange(listener) {
      stateListeners.add(listener);
      listener(state);
      return () => stateListeners.delete(listener);
    },
  };
}

