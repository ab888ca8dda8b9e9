import { create } from 'zustand';
import type { ArchonClient } from '../../../shared/ipc/client';
import type { ArchonEvent } from '../../../shared/schemas/events';
import { createEstopSlice, type EstopSlice } from '../features/emergency-stop/estop-slice';
import { initialRunsSlice, type RunsSlice } from '../features/runs/runs-slice';
import { createSettingsSlice, type SettingsSlice } from '../features/settings/settings-slice';
import { createShellSlice, type ShellSlice } from '../features/shell/shell-slice';
import type { SliceContext } from './slice';

export interface AppState extends ShellSlice, EstopSlice, RunsSlice, SettingsSlice {
  client: ArchonClient;
  applyEvent(event: ArchonEvent): void;
  refresh(): Promise<void>;
}

/** The renderer's one store, composed from the features' slices. */
export function createAppStore(client: ArchonClient) {
  return create<AppState>()((set, get) => {
    const context: SliceContext = {
      set,
      get,
      client,
      async attempt(action) {
        try {
          await action();
        } catch (error) {
          set({ error: error instanceof Error ? error.message : String(error) });
        }
      },
    };
    return {
      ...createShellSlice(context),
      ...createEstopSlice(context),
      ...initialRunsSlice,
      ...createSettingsSlice(context),
      client,
      applyEvent(event) {
        if (event.type === 'system.estop') set({ estop: event.state });
      },
      refresh: () =>
        context.attempt(async () => {
          const [estop, runs, settings] = await Promise.all([
            client.commands['estop.status'](),
            client.commands['runs.list'](),
            client.commands['settings.get'](),
          ]);
          set({ estop, runs, settings });
        }),
    };
  });
}

export type AppStore = ReturnType<typeof createAppStore>;
