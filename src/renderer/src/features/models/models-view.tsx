import { useEffect, useId, useState } from 'react';
import { MODEL_PRESETS } from '../../../../shared/model-presets';
import { useAppStore } from '../../store/use-app-store';
import { ModelItem } from './model-item';

/** How often the list is asked again while a download runs: its progress bar moves at this pace. */
const POLL_MS = 500;

function AddModelForm() {
  const addModel = useAppStore((state) => state.addModel);
  const [path, setPath] = useState('');
  const id = useId();
  return (
    <form
      className="model-add"
      aria-labelledby={`${id}-heading`}
      onSubmit={(event) => {
        event.preventDefault();
        void addModel(path.trim()).then((added) => added && setPath(''));
      }}
    >
      <h2 id={`${id}-heading`}>Add a .gguf file</h2>
      <label htmlFor={`${id}-path`}>Path of a .gguf file on this machine</label>
      <div className="model-add-row">
        <input id={`${id}-path`} value={path} placeholder="/home/me/models/model.gguf" onChange={(event) => setPath(event.target.value)} />
        <button type="submit" disabled={path.trim() === ''}>
          Add file
        </button>
      </div>
      <p className="hint">The file stays where it is; Remove only takes it off this list.</p>
    </form>
  );
}

/** The models Archon's built-in engine runs: download, cancel, remove, add a file, and Use one for runs. */
export function ModelsView() {
  const models = useAppStore((state) => state.models);
  const settings = useAppStore((state) => state.settings);
  const hostFixesServer = useAppStore((state) => state.info?.hostFlags.includes('modelUrl') ?? false);
  const loadModels = useAppStore((state) => state.loadModels);
  const downloading = models.some((model) => model.download !== null);
  useEffect(() => {
    void loadModels();
  }, [loadModels]);
  useEffect(() => {
    if (!downloading) return;
    const timer = setInterval(() => void loadModels(), POLL_MS);
    return () => clearInterval(timer);
  }, [downloading, loadModels]);
  const inUse = (name: string) => settings?.modelUrl === MODEL_PRESETS.builtin && settings.model === name;
  return (
    <section aria-labelledby="models-heading" className="view models">
      <h1 id="models-heading">Models</h1>
      <p className="models-intro">
        Archon&apos;s built-in engine runs these models on this machine, with no model server to install. Download one, then press Use: runs then use it.
      </p>
      {hostFixesServer && <p className="host-flag">This host was started with --model-url, so its runs use that server; Use is saved for when it is started without it.</p>}
      <ul className="model-list" aria-label="Models">
        {models.map((model) => (
          <ModelItem key={model.name} model={model} inUse={inUse(model.name)} />
        ))}
      </ul>
      <AddModelForm />
    </section>
  );
}
