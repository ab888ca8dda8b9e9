import { useEffect } from 'react';
import { ApprovalDialog } from './features/approvals/approval-dialog';
import { AuditView } from './features/audit/audit-view';
import { EstopBanner } from './features/emergency-stop/estop-banner';
import { RunsView } from './features/runs/runs-view';
import { SettingsView } from './features/settings/settings-view';
import { TopBar } from './features/shell/top-bar';
import { useAppStore } from './store/use-app-store';

const VIEWS = { runs: RunsView, audit: AuditView, settings: SettingsView } as const;

function useTheme() {
  const theme = useAppStore((state) => state.settings?.theme ?? 'system');
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
  }, [theme]);
}

export function App() {
  const view = useAppStore((state) => state.view);
  const error = useAppStore((state) => state.error);
  const dismissError = useAppStore((state) => state.dismissError);
  useTheme();
  const View = VIEWS[view];
  return (
    <div className="app">
      <TopBar />
      <EstopBanner />
      {error && (
        <div className="error-banner" role="alert">
          <span>{error}</span>
          <button type="button" onClick={dismissError}>
            Dismiss
          </button>
        </div>
      )}
      <main>
        <View />
      </main>
      <ApprovalDialog />
    </div>
  );
}
