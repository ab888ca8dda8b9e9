import { ArchonError, describeZodError, fromErrorEnvelope } from '../errors';
import { ArchonEventSchema, type ArchonEvent } from '../schemas/events';
import { COMMAND_NAMES, contract, type CommandInput, type CommandName, type CommandOutput } from './contract';
import { ResultEnvelopeSchema } from './envelope';

export type ConnectionState = 'connecting' | 'connected' | 'disconnected';

/** How a client reaches the runtime: Electron IPC through the preload, or the headless host's WebSocket. */
export interface Transport {
  invoke(name: CommandName, input: unknown): Promise<unknown>;
  subscribe(listener: (event: unknown) => void): () => void;
  onConnectionChange(listener: (state: ConnectionState) => void): () => void;
}

type RequiredKeys<T> = { [P in keyof T]-?: undefined extends T[P] ? never : P }[keyof T];
/** An input with nothing required (`{}` parses as `Record<string, never>`) may be left out. */
type InputArgs<T> = string extends keyof T ? [T?] : [RequiredKeys<T>] extends [never] ? [T?] : [T];

export type ArchonCommands = {
  [K in CommandName]: (...input: InputArgs<CommandInput<K>>) => Promise<CommandOutput<K>>;
};

export interface ArchonClient {
  commands: ArchonCommands;
  onEvent(listener: (event: ArchonEvent) => void): () => void;
  onConnectionChange(listener: (state: ConnectionState) => void): () => void;
}

async function call(transport: Transport, name: CommandName, input: unknown): Promise<unknown> {
  const envelope = ResultEnvelopeSchema.safeParse(await transport.invoke(name, input ?? {}));
  if (!envelope.success) {
    throw new ArchonError('INTERNAL', `The runtime answered ${name} with a malformed envelope: ${describeZodError(envelope.error)}`);
  }
  if (!envelope.data.ok) throw fromErrorEnvelope(envelope.data.error);
  return contract[name].output.parse(envelope.data.value);
}

export function createArchonClient(transport: Transport): ArchonClient {
  const commands = Object.fromEntries(
    COMMAND_NAMES.map((name) => [name, (input?: unknown) => call(transport, name, input)]),
  ) as ArchonCommands;
  return {
    commands,
    onEvent(listener) {
      return transport.subscribe((raw) => {
        const parsed = ArchonEventSchema.safeParse(raw);
        if (parsed.success) listener(parsed.data);
      });
    },
    onConnectionChange: (listener) => transport.onConnectionChange(listener),
  };
}
