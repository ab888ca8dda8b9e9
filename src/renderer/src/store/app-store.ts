import { create } from 'zustand';
import type { ArchonClient } from '../../../shared/ipc/client';
import type { ArchonEvent, RunEvent } from '../../../shared/schemas/events';
import { createApprovalsSlice, type ApprovalsSlice } from '../features/approvals/approvals-slice';
import { createAuditSlice, type AuditSlice } from '../features/audit/audit-slice';
import { createComposerSlice, type ComposerSlice } from '../features/composer/composer-slice';
import { createMemorySlice, type MemorySlice } from '../features/memory/memory-slice';
import { createModelsSlice, type ModelsSlice } from '../features/models/models-slice';
import { createEstopSlice, type EstopSlice } from '../features/emergency-stop/estop-slice';
import { createInboxSlice, type InboxSlice } from '../features/inbox/inbox-slice';
import { createRunsSlice, type RunsSlice } from '../features/runs/runs-slice';
import { createSchedulesSlice, type SchedulesSlice } from '../features/schedules/schedules-slice';
import { createSettingsSlice, type SettingsSlice } from '../features/settings/settings-slice';
import { createShellSlice, type ShellSlice } from '../features/shell/shell-slice';
import type { SliceContext } from './slice';

export interface AppState extends ShellSlice, EstopSlice, RunsSlice, ApprovalsSlice, AuditSlice, ComposerSlice, SettingsSlice, MemorySlice, ModelsSlice, InboxSlice, SchedulesSlice {
  client: ArchonClient;
  /** Applies a batch of events (at most one batch per animation frame). */
  applyEvents(events: readonly ArchonEvent[]): void;
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
      ...createRunsSlice(context),
      ...createApprovalsSlice(context),
      ...createAuditSlice(context),
      ...createComposerSlice(context),
      ...createSettingsSlice(context),
      ...createMemorySlice(context),
      ...createModelsSlice(context),
      ...createInboxSlice(context),
      ...createSchedulesSlice(context),
      client,
      applyEvents(events) {
        for (const event of events) if (event.type === 'system.estop') set({ estop: event.state });
        const runEvents = events.filter((event): event is RunEvent => 'runId' in event);
        if (runEvents.length > 0) get().applyRunEvents(runEvents);
        if (runEvents.some((event) => event.type === 'approval.requested' || event.type === 'approval.resolved' || event.type === 'run.stopped')) void get().refreshApprovals();
      },
      refresh: () =>
        context.attempt(async () => {
          // Runs and approvals through their own refreshers, so an answer that overtakes this one is not overwritten.
          const [estop, settings, info] = await Promise.all([client.commands['estop.status'](), client.commands['settings.get'](), client.commands['app.info'](), get().refreshRuns(), get().refreshApprovals()]);
          set({ estop, settings, info });
        }),
    };
  });
}

export type AppStore = ReturnType<typeof createAppStore>;
