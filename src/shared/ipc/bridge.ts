import type { CommandName, CommandOutput } from './contract';
import type { ResultEnvelope } from './envelope';

/** What the preload exposes as `window.archon`: one function per command, and an event subscription. */
export interface ArchonBridge {
  commands: { [K in CommandName]: (input: unknown) => Promise<ResultEnvelope<CommandOutput<K>>> };
  onEvent(listener: (event: unknown) => void): () => void;
}

export const BRIDGE_GLOBAL = 'archon';
