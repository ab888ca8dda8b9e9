import { z } from 'zod';

/** Messages from the runtime to a tool process. */
export const HostMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ping'), id: z.int().nonnegative() }),
]);
export type HostMessage = z.infer<typeof HostMessageSchema>;

/** Messages from a tool process to the runtime. */
export const ExecutorMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready'), pid: z.int() }),
  z.object({ type: z.literal('pong'), id: z.int().nonnegative() }),
  z.object({ type: z.literal('protocol_error'), message: z.string() }),
]);
export type ExecutorMessage = z.infer<typeof ExecutorMessageSchema>;

/** A message from a tool process, or a protocol error saying it was malformed. */
export function parseExecutorMessage(raw: unknown): ExecutorMessage {
  const parsed = ExecutorMessageSchema.safeParse(raw);
  return parsed.success ? parsed.data : { type: 'protocol_error', message: 'malformed message from tool process' };
}
