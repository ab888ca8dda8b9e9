import { z } from 'zod';
import { SideEffectsSchema } from './tool';

/** One tool a server offers, as Settings lists it: side effects and idempotency come from its annotations. */
export const McpToolSummarySchema = z.object({
  /** The tool's name on its server. */
  name: z.string(),
  /** The name runs and settings know it by (`SERVER__TOOL`, cut to the model's limits). */
  registeredName: z.string(),
  description: z.string(),
  sideEffects: SideEffectsSchema,
  idempotent: z.boolean(),
});
export type McpToolSummary = z.infer<typeof McpToolSummarySchema>;

/** Starting a server to see its tools: the tools, or what failed (command not found, crashed, timed out, protocol error) in plain words. */
export const McpProbeSchema = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), tools: z.array(McpToolSummarySchema) }),
  z.object({ ok: z.literal(false), failure: z.object({ kind: z.string().max(40), message: z.string() }) }),
]);
export type McpProbe = z.infer<typeof McpProbeSchema>;
