import { useAppStore } from '../../store/use-app-store';

/** While the stop is latched nothing starts; Re-arm only unlatches, it restarts nothing. */
export function EstopBanner() {
  const estop = useAppStore((state) => state.estop);
  const rearm = useAppStore((state) => state.rearm);
  if (!estop.latched) return null;
  return (
    <div className="estop-banner" role="alert">
      <strong>Emergency stop latched</strong>
      <span>
        {estop.reason ?? 'Stopped'} ({estop.triggeredBy ?? 'unknown'}, {estop.since ? new Date(estop.since).toLocaleString() : 'now'}). Nothing
        will start until you re-arm.
      </span>
      <button type="button" onClick={() => void rearm()}>
        Re-arm
      </button>
    </div>
  );
}
