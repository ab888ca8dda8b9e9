import type { EstopState } from '../../../../shared/schemas/estop';
import type { SliceContext } from '../../store/slice';

export interface EstopSlice {
  estop: EstopState;
  /** Why the last Emergency stop press did not reach Archon (the page lost its connection), until one does or it is dismissed. */
  estopUndelivered: string | null;
  triggerEstop(): Promise<void>;
  rearm(): Promise<void>;
  dismissEstopUndelivered(): void;
}

const DISCONNECTED = 'the page has lost its connection to Archon';

export function createEstopSlice({ set, get, client, attempt }: SliceContext): EstopSlice {
  return {
    estop: { latched: false, since: null, triggeredBy: null, reason: null },
    estopUndelivered: null,
    async triggerEstop() {
      // Said at once: a press while disconnected waits for the connection, which may never come back.
      if (get().connection !== 'connected') set({ estopUndelivered: DISCONNECTED });
      try {
        set({ estop: await client.commands['estop.trigger'](), estopUndelivered: null });
      } catch (error) {
        set({ estopUndelivered: error instanceof Error ? error.message : String(error) });
      }
    },
    rearm: () => attempt(async () => set({ estop: await client.commands['estop.reset']() })),
    dismissEstopUndelivered: () => set({ estopUndelivered: null }),
  };
}
