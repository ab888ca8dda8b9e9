import { z } from 'zod';

export const EstopTriggerSchema = z.enum(['operator', 'signal', 'cli', 'budget', 'repetition', 'error_storm']);
export type EstopTrigger = z.infer<typeof EstopTriggerSchema>;

/** The emergency stop is latched: once triggered, nothing starts until a person re-arms it. */
export const EstopStateSchema = z.object({
  latched: z.boolean(),
  since: z.string().nullable(),
  triggeredBy: EstopTriggerSchema.nullable(),
  reason: z.string().nullable(),
});
export type EstopState = z.infer<typeof EstopStateSchema>;
