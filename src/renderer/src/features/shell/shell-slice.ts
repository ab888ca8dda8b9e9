import type { ConnectionState } from '../../../../shared/ipc/client';
import type { SliceContext } from '../../store/slice';

export type View = 'runs' | 'inbox' | 'schedules' | 'audit' | 'memory' | 'models' | 'settings';

export interface ShellSlice {
  connection: ConnectionState;
  view: View;
  error: string | null;
  setView(view: View): void;
  setConnection(state: ConnectionState): void;
  dismissError(): void;
}

export function createShellSlice({ set, get }: SliceContext): ShellSlice {
  return {
    connection: 'connecting',
    view: 'runs',
    error: null,
    setView: (view) => set({ view }),
    setConnection(connection) {
      set({ connection });
      if (connection === 'connected') void get().refresh();
    },
    dismissError: () => set({ error: null }),
  };
}
