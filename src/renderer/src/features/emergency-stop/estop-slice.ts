import type { EstopState } from '../../../../shared/schemas/estop';
import type { SliceContext } from '../../store/slice';

export interface EstopSlice {
  estop: EstopState;
  triggerEstop(): Promise<void>;
  rearm(): Promise<void>;
}

export function createEstopSlice({ set, client, attempt }: SliceContext): EstopSlice {
  return {
    estop: { latched: false, since: null, triggeredBy: null, reason: null },
    triggerEstop: () => attempt(async () => set({ estop: await client.commands['estop.trigger']() })),
    rearm: () => attempt(async () => set({ estop: await client.commands['estop.reset']() })),
  };
}
