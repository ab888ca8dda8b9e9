import type { Settings, SettingsPatch } from '../../../../shared/schemas/settings';
import type { SliceContext } from '../../store/slice';

export interface SettingsSlice {
  settings: Settings | null;
  updateSettings(patch: SettingsPatch): Promise<void>;
}

export function createSettingsSlice({ set, client, attempt }: SliceContext): SettingsSlice {
  return {
    settings: null,
    updateSettings: (patch) => attempt(async () => set({ settings: await client.commands['settings.update'](patch) })),
  };
}
