import { z } from 'zod';
import { EstopStateSchema } from '../schemas/estop';
import { RunSummarySchema } from '../schemas/run';
import { SettingsPatchSchema, SettingsSchema } from '../schemas/settings';

const command = <I extends z.ZodType, O extends z.ZodType>(input: I, output: O) => ({ input, output });
const noInput = z.object({}).strict();

export const AppInfoSchema = z.object({
  version: z.string(),
  dataDir: z.string(),
  host: z.enum(['electron', 'headless']),
});

/**
 * The one contract between the UI and the runtime. The preload bridge, the Electron handlers, the
 * headless host and the renderer client are all derived from this object.
 */
export const contract = {
  'app.info': command(noInput, AppInfoSchema),
  'runs.list': command(z.object({ limit: z.int().min(1).max(500).default(100) }).strict(), z.array(RunSummarySchema)),
  'estop.status': command(noInput, EstopStateSchema),
  'estop.trigger': command(
    z.object({ reason: z.string().min(1).max(500).default('Emergency stop pressed in the app') }).strict(),
    EstopStateSchema,
  ),
  'estop.reset': command(noInput, EstopStateSchema),
  'settings.get': command(noInput, SettingsSchema),
  'settings.update': command(SettingsPatchSchema, SettingsSchema),
};

export type Contract = typeof contract;
export type CommandName = keyof Contract;
export type CommandInput<K extends CommandName> = z.input<Contract[K]['input']>;
export type ParsedCommandInput<K extends CommandName> = z.output<Contract[K]['input']>;
export type CommandOutput<K extends CommandName> = z.output<Contract[K]['output']>;

export const COMMAND_NAMES = Object.keys(contract) as CommandName[];

export function isCommandName(name: string): name is CommandName {
  return Object.hasOwn(contract, name);
}

/** Every Electron IPC channel is this prefix plus a command name; main and preload refuse all others. */
export const IPC_PREFIX = 'archon:';
export const IPC_EVENT_CHANNEL = 'archon:event';
