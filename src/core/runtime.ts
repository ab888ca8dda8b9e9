import type { CommandHandlers } from '../shared/ipc/dispatch';
import { createCommandHandlers } from './command-handlers';
import { EventBus } from './events/event-bus';
import { RunEventLog } from './events/run-event-log';
import { ArchonStore } from './store/archon-store';

export interface RuntimeOptions {
  dataDir: string;
  version: string;
  host: 'electron' | 'headless';
  now?: () => Date;
}

export interface ArchonRuntime {
  readonly dataDir: string;
  readonly store: ArchonStore;
  readonly bus: EventBus;
  readonly events: RunEventLog;
  readonly handlers: CommandHandlers;
  readonly now: () => Date;
  close(): void;
}

/** The composition root shared by every host: Electron main, the headless host and the CLI. */
export function createRuntime(options: RuntimeOptions): ArchonRuntime {
  const now = options.now ?? (() => new Date());
  const store = ArchonStore.open(options.dataDir);
  const bus = new EventBus();
  const events = new RunEventLog(store, bus, now);
  const handlers = createCommandHandlers({
    store,
    bus,
    now,
    info: { version: options.version, dataDir: options.dataDir, host: options.host },
  });
  return {
    dataDir: options.dataDir,
    store,
    bus,
    events,
    handlers,
    now,
    close() {
      events.flush();
      store.close();
    },
  };
}
