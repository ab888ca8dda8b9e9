import { EventBus } from './events/event-bus';
import { openLog, type Log } from './log';
import { RunEventLog } from './events/run-event-log';
import { ArchonStore } from './store/archon-store';
import { asStoreError } from './store/open-database';

export interface RuntimeOptions {
  dataDir: string;
  now?: () => Date;
}

export interface ArchonRuntime {
  readonly dataDir: string;
  readonly store: ArchonStore;
  readonly bus: EventBus;
  readonly events: RunEventLog;
  readonly now: () => Date;
  readonly log: Log;
  close(): void;
}

/** The state every host shares: the store, the event bus, the event log. */
export function createRuntime(options: RuntimeOptions): ArchonRuntime {
  const now = options.now ?? (() => new Date());
  const store = ArchonStore.open(options.dataDir);
  const log = openLog(options.dataDir);
  const bus = new EventBus((error, event) => log.error({ err: error, event: event.type }, 'an event subscriber failed'));
  const events = new RunEventLog(store, bus, now);
  return {
    dataDir: options.dataDir,
    store,
    bus,
    events,
    now,
    log,
    close() {
      try {
        events.flush();
      } catch (error) {
        throw asStoreError(error) ?? error;
      } finally {
        store.close();
      }
    },
  };
}
