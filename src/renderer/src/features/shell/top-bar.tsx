import { useId } from 'react';
import { EmergencyStopButton } from '../emergency-stop/emergency-stop-button';
import { useAppStore } from '../../store/use-app-store';
import type { View } from './shell-slice';

const VIEWS: { id: View; label: string }[] = [
  { id: 'runs', label: 'Runs' },
  { id: 'inbox', label: 'Inbox' },
  { id: 'schedules', label: 'Schedules' },
  { id: 'audit', label: 'Audit' },
  { id: 'memory', label: 'Memory' },
  { id: 'models', label: 'Models' },
  { id: 'settings', label: 'Settings' },
];

const CONNECTION_LABEL = { connecting: 'Connecting…', connected: 'Connected', disconnected: 'Disconnected' } as const;

/** How many runs in the inbox the operator has not seen; 0 on the other entries. */
function useUnseen(view: View): number {
  return useAppStore((state) => (view === 'inbox' ? state.inbox.filter((item) => !state.inboxSeen.has(item.run.id)).length : 0));
}

/** One entry of the Main navigation; a count of unseen items shows beside its name without changing it. */
function NavEntry({ id, label }: { id: View; label: string }) {
  const current = useAppStore((state) => state.view === id);
  const setView = useAppStore((state) => state.setView);
  const unseen = useUnseen(id);
  const countId = useId();
  const counted = unseen > 0 ? `${unseen} unseen` : null;
  return (
    <>
      <button type="button" className="nav-entry" aria-current={current ? 'page' : undefined} aria-describedby={counted ? countId : undefined} onClick={() => setView(id)}>
        {label}
        {counted && (
          <span className="nav-count" aria-hidden="true">
            {unseen}
          </span>
        )}
      </button>
      {counted && (
        <span id={countId} className="sr-only">
          {counted}
        </span>
      )}
    </>
  );
}

export function TopBar() {
  const connection = useAppStore((state) => state.connection);
  return (
    <header className="top-bar">
      <span className="brand">Archon</span>
      <nav aria-label="Main">
        {VIEWS.map((entry) => (
          <NavEntry key={entry.id} id={entry.id} label={entry.label} />
        ))}
      </nav>
      <span className={`connection connection-${connection}`} role="status">
        {CONNECTION_LABEL[connection]}
      </span>
      <EmergencyStopButton />
    </header>
  );
}
