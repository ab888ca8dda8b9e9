import { EmergencyStopButton } from '../emergency-stop/emergency-stop-button';
import { useAppStore } from '../../store/use-app-store';
import type { View } from './shell-slice';

const VIEWS: { id: View; label: string }[] = [
  { id: 'runs', label: 'Runs' },
  { id: 'audit', label: 'Audit' },
  { id: 'memory', label: 'Memory' },
  { id: 'models', label: 'Models' },
  { id: 'settings', label: 'Settings' },
];

const CONNECTION_LABEL = { connecting: 'Connecting…', connected: 'Connected', disconnected: 'Disconnected' } as const;

export function TopBar() {
  const view = useAppStore((state) => state.view);
  const setView = useAppStore((state) => state.setView);
  const connection = useAppStore((state) => state.connection);
  return (
    <header className="top-bar">
      <span className="brand">Archon</span>
      <nav aria-label="Main">
        {VIEWS.map((entry) => (
          <button
            key={entry.id}
            type="button"
            className="nav-entry"
            aria-current={view === entry.id ? 'page' : undefined}
            onClick={() => setView(entry.id)}
          >
            {entry.label}
          </button>
        ))}
      </nav>
      <span className={`connection connection-${connection}`} role="status">
        {CONNECTION_LABEL[connection]}
      </span>
      <EmergencyStopButton />
    </header>
  );
}
