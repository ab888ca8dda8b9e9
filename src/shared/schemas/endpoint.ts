import { z } from 'zod';

/** What the pre-run probe learned about a model server. */
export const EndpointProbeSchema = z.object({
  baseUrl: z.string(),
  models: z.array(z.string()),
  /** The model a run will use: the one asked for, else the first the server lists. */
  model: z.string(),
  /** Native tool calling; when false the run speaks the text protocol. */
  toolCalling: z.boolean(),
  /** False when the server refuses to stream with tools: requests are then sent whole. */
  streaming: z.boolean(),
  /** Why the run does not use streamed native tool calls (the server's refusal, and how to lift it). */
  reason: z.string().nullable(),
  contextLength: z.int().nullable(),
  /** Where the context length came from (a server endpoint, a default, or the setting). */
  contextSource: z.string().nullable(),
  parallelSlots: z.int().nullable(),
});
export type EndpointProbe = z.infer<typeof EndpointProbeSchema>;
