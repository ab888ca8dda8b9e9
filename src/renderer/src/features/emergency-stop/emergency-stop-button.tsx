import { useEffect } from 'react';
import { useAppStore } from '../../store/use-app-store';

/** Ctrl+Shift+X (Cmd+Shift+X on macOS) stops everything from anywhere in the app. */
function isStopShortcut(event: KeyboardEvent): boolean {
  return (event.ctrlKey || event.metaKey) && event.shiftKey && event.key.toLowerCase() === 'x';
}

/** Red, on every screen, no confirmation: one press latches the stop. */
export function EmergencyStopButton() {
  const triggerEstop = useAppStore((state) => state.triggerEstop);
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (isStopShortcut(event)) {
        event.preventDefault();
        void triggerEstop();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [triggerEstop]);
  return (
    <button type="button" className="estop-button" onClick={() => void triggerEstop()} aria-keyshortcuts="Control+Shift+X">
      Emergency stop
    </button>
  );
}
