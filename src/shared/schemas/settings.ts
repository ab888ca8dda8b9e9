import { z } from 'zod';
import { PolicySchema } from './run';

export const ThemeSchema = z.enum(['system', 'light', 'dark']);

export const SettingsSchema = z.object({
  modelUrl: z.url({ protocol: /^https?$/ }),
  model: z.string().max(200),
  policy: PolicySchema,
  concurrency: z.int().min(1).max(64).nullable(),
  networkTools: z.boolean(),
  theme: ThemeSchema,
});
export type Settings = z.infer<typeof SettingsSchema>;

export const SettingsPatchSchema = SettingsSchema.partial().strict();
export type SettingsPatch = z.infer<typeof SettingsPatchSchema>;

export const DEFAULT_SETTINGS: Settings = {
  modelUrl: 'http://127.0.0.1:11434/v1',
  model: '',
  policy: 'balanced',
  concurrency: null,
  networkTools: false,
  theme: 'system',
};
