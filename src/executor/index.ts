import { HostMessageSchema, type ExecutorMessage } from '../shared/executor-protocol';
import { dispatchTool } from './tool-dispatch';

/** Runs inside a tool process: a utilityProcess in the app, a forked child elsewhere. */
interface ParentChannel {
  send(message: ExecutorMessage): void;
  onMessage(listener: (raw: unknown) => void): void;
}

function parentChannel(): ParentChannel {
  const parentPort = (process as { parentPort?: { postMessage(m: unknown): void; on(e: 'message', l: (e: { data: unknown }) => void): void } }).parentPort;
  if (parentPort) {
    return {
      send: (message) => parentPort.postMessage(message),
      onMessage: (listener) => parentPort.on('message', (event) => listener(event.data)),
    };
  }
  if (!process.send) throw new Error('The tool executor must be started by Archon (no IPC channel to its parent).');
  return {
    send: (message) => process.send?.(message),
    onMessage: (listener) => process.on('message', listener),
  };
}

const channel = parentChannel();
channel.onMessage((raw) => {
  const parsed = HostMessageSchema.safeParse(raw);
  if (!parsed.success) {
    channel.send({ type: 'protocol_error', message: parsed.error.message });
    return;
  }
  const message = parsed.data;
  if (message.type === 'ping') {
    channel.send({ type: 'pong', id: message.id });
    return;
  }
  void dispatchTool(message.tool, message.args, {
    workspace: message.workspace,
    networkTools: message.networkTools,
    confinement: message.confinement,
    timeoutMs: message.timeoutMs,
    signal: AbortSignal.timeout(message.timeoutMs),
    onSpawn: (spawned) => channel.send({ type: 'spawned', id: message.id, ...spawned }),
  }).then((result) => channel.send({ type: 'result', id: message.id, result }));
});
process.on('disconnect', () => process.exit(0));
channel.send({ type: 'ready', pid: process.pid });
