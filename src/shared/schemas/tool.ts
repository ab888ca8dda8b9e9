import { z } from 'zod';

/** What running a tool can do to the world; the approval gate reads it. */
export const SideEffectsSchema = z.enum(['none', 'reversible', 'irreversible']);
export type SideEffects = z.infer<typeof SideEffectsSchema>;

export const ToolStatusSchema = z.enum(['success', 'error', 'timeout', 'denied', 'cancelled']);
export type ToolStatus = z.infer<typeof ToolStatusSchema>;

/** A piece of a tool's result beyond its text, as MCP servers return them: shown in the step inspector. */
export const ToolResultPartSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  /** `data` is base64, at most 256 KiB encoded; larger images are left out and say so in `content`. */
  z.object({ type: z.literal('image'), mimeType: z.string(), data: z.string().max(262_144) }),
  z.object({ type: z.literal('resource'), uri: z.string(), name: z.string().optional(), mimeType: z.string().optional() }),
]);
export type ToolResultPart = z.infer<typeof ToolResultPartSchema>;

export const ToolResultSchema = z.object({
  status: ToolStatusSchema,
  content: z.string(),
  metadata: z.record(z.string(), z.unknown()),
  parts: z.array(ToolResultPartSchema).max(32).optional(),
});
export type ToolResult = z.infer<typeof ToolResultSchema>;
