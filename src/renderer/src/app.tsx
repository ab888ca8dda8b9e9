import { useEffect } from 'react';
import { inAppTerms } from '../../shared/app-advice';
import { ApprovalDialog } from './features/approvals/approval-dialog';
import { useClusterApprovalsWatch } from './features/approvals/use-cluster-approvals-watch';
import { AuditView } from './features/audit/audit-view';
import { EstopBanner } from './features/emergency-stop/estop-banner';
import { EstopUndeliveredAlert } from './features/emergency-stop/estop-undelivered-alert';
import { MemoryView } from './features/memory/memory-view';
import { InboxView } from './features/inbox/inbox-view';
import { useInboxWatch } from './features/inbox/use-inbox-watch';
import { HostConfirmationNotice } from './features/host-confirmation/host-confirmation-notice';
import { GetModelCallout } from './features/models/get-model-callout';
import { ModelsView } from './features/models/models-view';
import { RunsView } from './features/runs/runs-view';
import { SchedulesView } from './features/schedules/schedules-view';
import { SettingsView } from './features/settings/settings-view';
import { TopBar } from './features/shell/top-bar';
import { useAppStore } from './store/use-app-store';

const VIEWS = { runs: RunsView, inbox: InboxView, schedules: SchedulesView, audit: AuditView, memory: MemoryView, models: ModelsView, settings: SettingsView } as const;

/** Sets `data-theme` to light or dark; "system" follows the operating system, also when it changes. */
function useTheme() {
  const theme = useAppStore((state) => state.settings?.theme ?? 'system');
  useEffect(() => {
    const dark = matchMedia('(prefers-color-scheme: dark)');
    const apply = () => {
      document.documentElement.dataset.theme = theme === 'system' ? (dark.matches ? 'dark' : 'light') : theme;
    };
    apply();
    dark.addEventListener('change', apply);
    return () => dark.removeEventListener('change', apply);
  }, [theme]);
}

export function App() {
  const view = useAppStore((state) => state.view);
  const error = useAppStore((state) => state.error);
  const dismissError = useAppStore((state) => state.dismissError);
  useTheme();
  useInboxWatch();
  useClusterApprovalsWatch();
  const View = VIEWS[view];
  return (
    <div className="app">
      <div className="in-reach">
        <TopBar />
        <EstopUndeliveredAlert />
      </div>
      <EstopBanner />
      <HostConfirmationNotice />
      {error && (
        <div className="error-banner" role="alert">
          <span>{inAppTerms(error)}</span>
          <button type="button" onClick={dismissError}>
            Dismiss
          </button>
        </div>
      )}
      <GetModelCallout />
      <main>
        <View />
      </main>
      <ApprovalDialog />
    </div>
  );
}
