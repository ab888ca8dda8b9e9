import { z } from 'zod';

/** What running a tool can do to the world; the approval gate reads it. */
export const SideEffectsSchema = z.enum(['none', 'reversible', 'irreversible']);
export type SideEffects = z.infer<typeof SideEffectsSchema>;

export const ToolStatusSchema = z.enum(['success', 'error', 'timeout', 'denied', 'cancelled']);
export type ToolStatus = z.infer<typeof ToolStatusSchema>;

export const ToolResultSchema = z.object({
  status: ToolStatusSchema,
  content: z.string(),
  metadata: z.record(z.string(), z.unknown()),
});
export type ToolResult = z.infer<typeof ToolResultSchema>;
