import { useState } from 'react';
import { formatBytes } from '../../../../shared/byte-size';
import type { ModelEntry } from '../../../../shared/ipc/contract';
import type { DownloadProgress } from '../../../../shared/schemas/models';
import { useAppStore } from '../../store/use-app-store';
import { ConfirmOrCancel } from '../approvals/confirm-or-cancel';

function stateOf(model: ModelEntry): string {
  if (model.download) return 'Downloading';
  if (model.installed) return 'Installed';
  if (model.source === 'local') return 'File missing';
  return model.partialBytes > 0 ? `Partly downloaded (${formatBytes(model.partialBytes)}), Download resumes` : 'Not installed';
}

function facts(model: ModelEntry): string {
  return [
    model.sizeBytes === null ? null : formatBytes(model.sizeBytes),
    model.memoryBytes === null ? null : `needs ${formatBytes(model.memoryBytes)} of memory`,
    model.licence,
    model.source === 'local' ? model.path : null,
  ]
    .filter((fact) => fact !== null)
    .join(' · ');
}

function DownloadBar({ title, progress }: { title: string; progress: DownloadProgress }) {
  const percent = progress.totalBytes ? Math.floor((progress.doneBytes / progress.totalBytes) * 100) : null;
  const amount = progress.totalBytes === null ? formatBytes(progress.doneBytes) : `${formatBytes(progress.doneBytes)} of ${formatBytes(progress.totalBytes)}`;
  return (
    <div className="download">
      <div
        role="progressbar"
        aria-label={`Downloading ${title}`}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={percent ?? undefined}
        aria-valuetext={percent === null ? amount : `${percent}%, ${amount}`}
        className="download-bar"
      >
        <div className="download-done" style={{ width: `${percent ?? 0}%` }} />
      </div>
      <span className="hint">{percent === null ? amount : `${percent}% · ${amount}`}</span>
    </div>
  );
}

function removeQuestion(model: ModelEntry): string {
  if (model.source === 'local') return `Remove ${model.title} from the library? The file stays where it is.`;
  return `Remove ${model.title}? Its file${model.sizeBytes === null ? '' : ` (${formatBytes(model.sizeBytes)})`} is deleted; download it again to use it.`;
}

/** One model: what it is, its state, and what can be done with it now. */
export function ModelItem({ model, inUse }: { model: ModelEntry; inUse: boolean }) {
  const pullModel = useAppStore((state) => state.pullModel);
  const cancelDownload = useAppStore((state) => state.cancelDownload);
  const removeModel = useAppStore((state) => state.removeModel);
  const chooseModel = useAppStore((state) => state.chooseModel);
  const [removing, setRemoving] = useState(false);
  const removable = !model.download && (model.installed || model.partialBytes > 0 || model.source === 'local');
  return (
    <li className="model-item" aria-label={model.title}>
      <div className="model-head">
        <h2>{model.title}</h2>
        <span className={`model-state${model.installed ? ' installed' : ''}`}>{inUse ? `${stateOf(model)}, in use` : stateOf(model)}</span>
      </div>
      <p className="model-facts">{facts(model)}</p>
      {model.download && <DownloadBar title={model.title} progress={model.download} />}
      {model.lastError && <p className="invalid">{model.lastError}</p>}
      {removing ? (
        <div role="group" aria-label={`Confirm removing ${model.title}`}>
          <p>{removeQuestion(model)}</p>
          <ConfirmOrCancel label="Remove" danger onConfirm={() => void removeModel(model.name).then(() => setRemoving(false))} onCancel={() => setRemoving(false)} />
        </div>
      ) : (
        <div className="actions">
          {model.installed && !inUse && (
            <button type="button" className="primary" aria-label={`Use ${model.title}`} onClick={() => void chooseModel(model.name)}>
              Use
            </button>
          )}
          {!model.installed && !model.download && model.source === 'catalog' && (
            <button type="button" aria-label={`Download ${model.title}`} onClick={() => void pullModel(model.name)}>
              Download
            </button>
          )}
          {model.download && (
            <button type="button" aria-label={`Cancel download of ${model.title}`} onClick={() => void cancelDownload(model.name)}>
              Cancel
            </button>
          )}
          {removable && (
            <button type="button" aria-label={`Remove ${model.title}`} onClick={() => setRemoving(true)}>
              Remove
            </button>
          )}
        </div>
      )}
    </li>
  );
}
