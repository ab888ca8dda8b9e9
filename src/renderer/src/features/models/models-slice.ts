import { ArchonError } from '../../../../shared/errors';
import type { ModelEntry } from '../../../../shared/ipc/contract';
import { isBuiltinModelUrl, MODEL_PRESETS } from '../../../../shared/model-presets';
import { latestOnly } from '../../store/latest-only';
import type { SliceContext } from '../../store/slice';

export interface ModelsSlice {
  models: ModelEntry[];
  /** The model server that did not answer the last probe of it (at start, or on Run); null once one answers or the built-in engine is chosen. */
  modelServerDown: string | null;
  loadModels(): Promise<void>;
  pullModel(name: string): Promise<void>;
  cancelDownload(name: string): Promise<void>;
  removeModel(name: string): Promise<void>;
  /** Resolves whether the file was added, so the form keeps a path that was refused. */
  addModel(path: string): Promise<boolean>;
  /** Makes runs use the built-in engine with this library model. */
  chooseModel(name: string): Promise<void>;
  /** What a probe of `modelUrl` told: an error saying it does not answer, or null when it did. */
  noteModelServer(modelUrl: string, error: unknown): void;
  /** On a fresh start (no runs yet, the server not one the host's command line named), whether the default model server answers. */
  checkModelServer(): Promise<void>;
}

const unreachable = (error: unknown) => ArchonError.isInstance(error) && error.code === 'MODEL_UNREACHABLE';

export function createModelsSlice({ set, get, client, attempt }: SliceContext): ModelsSlice {
  const reload = latestOnly(
    () => client.commands['models.list'](),
    (models) => set({ models }),
  );
  const thenReload = (action: () => Promise<unknown>) =>
    attempt(async () => {
      try {
        await action();
      } finally {
        await reload();
      }
    });
  return {
    models: [],
    modelServerDown: null,
    loadModels: () => attempt(reload),
    pullModel: (name) => thenReload(() => client.commands['models.pull']({ name })),
    cancelDownload: (name) => thenReload(() => client.commands['models.cancel']({ name })),
    removeModel: (name) => thenReload(() => client.commands['models.remove']({ name })),
    async addModel(path) {
      let added = false;
      await thenReload(async () => {
        await client.commands['models.add']({ path });
        added = true;
      });
      return added;
    },
    chooseModel: (name) =>
      attempt(async () => {
        const settings = await client.commands['settings.update']({ modelUrl: MODEL_PRESETS.builtin, model: name });
        set({ settings, info: await client.commands['app.info'](), modelServerDown: null });
      }),
    noteModelServer(modelUrl, error) {
      if (error === null) set({ modelServerDown: null });
      else if (unreachable(error)) set({ modelServerDown: modelUrl });
    },
    async checkModelServer() {
      const { info, runs } = get();
      if (!info || runs.length > 0 || info.hostFlags.includes('modelUrl') || isBuiltinModelUrl(info.runDefaults.modelUrl)) return;
      const { modelUrl, model } = info.runDefaults;
      let outcome: unknown = null;
      try {
        await client.commands['endpoint.probe']({ modelUrl, ...(model ? { model } : {}) });
      } catch (error) {
        // Only a server that does not answer is this check's business; anything else is said when a run starts.
        outcome = error;
      }
      // The operator may have chosen another server (or the built-in engine) while the probe was out.
      if (get().info?.runDefaults.modelUrl === modelUrl) get().noteModelServer(modelUrl, outcome);
    },
  };
}
