import { useEffect } from 'react';
import { useAppStore } from '../../store/use-app-store';

/**
 * When no model server answers, the way forward rather than only the error: the built-in engine
 * first (a model from the Models view, nothing to install), then a server of one's own.
 */
export function GetModelCallout() {
  const down = useAppStore((state) => state.modelServerDown);
  const view = useAppStore((state) => state.view);
  const info = useAppStore((state) => state.info);
  const setView = useAppStore((state) => state.setView);
  const checkModelServer = useAppStore((state) => state.checkModelServer);
  useEffect(() => {
    void checkModelServer();
  }, [info, checkModelServer]);
  if (!down || view === 'models') return null;
  return (
    <section className="get-model" aria-label="No model server">
      <p>
        <strong>No model server answers at {down}.</strong> Archon can run a model itself, with nothing to install: download one and runs use Archon&apos;s built-in engine.
        Or start your model server and set its address in Settings.
      </p>
      <button type="button" className="primary" onClick={() => setView('models')}>
        Get a model
      </button>
    </section>
  );
}
