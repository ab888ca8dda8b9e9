import { z } from 'zod';
import { BUILTIN_TOOL_NAMES, type BuiltinToolName } from '../../shared/tools/catalogue';

/** A call's longest time limit: run_command's own ceiling. */
export const MAX_CALL_MS = 600_000;

/** One built-in tool call as the desk sends it to a worker, signed with the cluster's secret under its key (signed.ts). */
export const RemoteCallSchema = z.object({
  tool: z.enum(BUILTIN_TOOL_NAMES as [BuiltinToolName, ...BuiltinToolName[]]),
  args: z.unknown(),
  timeoutMs: z.int().nonnegative().max(MAX_CALL_MS),
  signature: z.string().regex(/^[0-9a-f]{64}$/),
});
export type RemoteCall = z.infer<typeof RemoteCallSchema>;
