import { useAppStore } from '../../store/use-app-store';

/** A stop that did not reach Archon is said loudly, with the ways that still work. */
export function EstopUndeliveredAlert() {
  const problem = useAppStore((state) => state.estopUndelivered);
  const dismiss = useAppStore((state) => state.dismissEstopUndelivered);
  if (!problem) return null;
  return (
    <div className="estop-undelivered" role="alert">
      <strong>The emergency stop was NOT delivered</strong>
      <span>
        ({problem}). Runs may still be going. Stop them from a terminal: run <code>archon estop</code> (with the same <code>--data-dir</code>), or press Ctrl+C in the
        terminal where <code>archon serve</code> runs. The stop is sent from here as soon as the connection comes back.
      </span>
      <button type="button" onClick={dismiss}>
        Dismiss
      </button>
    </div>
  );
}
