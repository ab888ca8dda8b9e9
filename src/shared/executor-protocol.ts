import { z } from 'zod';
import { SandboxModeSchema } from './schemas/settings';
import { ToolResultSchema } from './schemas/tool';

/** How a command is confined: the mode, the network, and the folders the sandbox must hide. */
export const ConfinementSchema = z.object({
  mode: SandboxModeSchema,
  allowNetwork: z.boolean(),
  /** Absolute folders never visible to a command (the home folder, the data dir, the audit key folder). */
  hidden: z.array(z.string().min(1)).max(32),
});
export type Confinement = z.infer<typeof ConfinementSchema>;

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
    confinement: ConfinementSchema,
    timeoutMs: z.int().positive(),
  }),
]);
export type HostMessage = z.infer<typeof HostMessageSchema>;

/** Messages from a tool process to the runtime. */
export const ExecutorMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready'), pid: z.int() }),
  z.object({ type: z.literal('pong'), id: z.int().nonnegative() }),
  z.object({ type: z.literal('result'), id: z.int().nonnegative(), result: ToolResultSchema }),
  /**
   * A call started a process group of its own, and maybe a sandbox whose init (a host pid) takes every
   * process inside with it; the runtime kills them on timeout or stop and waits until they are gone.
   */
  z.object({ type: z.literal('spawned'), id: z.int().nonnegative(), pgid: z.int().positive(), sandboxPid: z.int().positive().optional() }),
  z.object({ type: z.literal('protocol_error'), message: z.string() }),
]);
export type ExecutorMessage = z.infer<typeof ExecutorMessageSchema>;

/** A message from a tool process, or a protocol error saying it was malformed. */
export function parseExecutorMessage(raw: unknown): ExecutorMessage {
  const parsed = ExecutorMessageSchema.safeParse(raw);
  return parsed.success ? parsed.data : { type: 'protocol_error', message: 'malformed message from tool process' };
}
