import { z } from 'zod';
import { ToolResultSchema } from './schemas/tool';

/** Messages from the runtime to a tool process. */
export const HostMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ping'), id: z.int().nonnegative() }),
  z.object({
    type: z.literal('call'),
    id: z.int().nonnegative(),
    tool: z.string(),
    args: z.unknown(),
    workspace: z.string().min(1),
    networkTools: z.boolean(),
    timeoutMs: z.int().positive(),
  }),
]);
export type HostMessage = z.infer<typeof HostMessageSchema>;

/** Messages from a tool process to the runtime. */
export const ExecutorMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready'), pid: z.int() }),
  z.object({ type: z.literal('pong'), id: z.int().nonnegative() }),
  z.object({ type: z.literal('result'), id: z.int().nonnegative(), result: ToolResultSchema }),
  /** A call started a process group of its own; the runtime kills it on timeout or stop. */
  z.object({ type: z.literal('spawned'), id: z.int().nonnegative(), pgid: z.int().positive() }),
  z.object({ type: z.literal('protocol_error'), message: z.string() }),
]);
export type ExecutorMessage = z.infer<typeof ExecutorMessageSchema>;

/** A message from a tool process, or a protocol error saying it was malformed. */
export function parseExecutorMessage(raw: unknown): ExecutorMessage {
  const parsed = ExecutorMessageSchema.safeParse(raw);
  return parsed.success ? parsed.data : { type: 'protocol_error', message: 'malformed message from tool process' };
}
