import type { Settings, SettingsPatch } from '../../../../shared/schemas/settings';
import type { CommandOutput } from '../../../../shared/ipc/contract';
import type { SliceContext } from '../../store/slice';

export interface SettingsSlice {
  settings: Settings | null;
  info: CommandOutput<'app.info'> | null;
  updateSettings(patch: SettingsPatch): Promise<void>;
}

export function createSettingsSlice({ set, client, attempt }: SliceContext): SettingsSlice {
  return {
    settings: null,
    info: null,
    updateSettings: (patch) => attempt(async () => set({ settings: await client.commands['settings.update'](patch) })),
  };
}
