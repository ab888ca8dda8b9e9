import { z } from 'zod';

/** What the pre-run probe learned about a model server. */
export const EndpointProbeSchema = z.object({
  baseUrl: z.string(),
  models: z.array(z.string()),
  /** The model a run will use: the one asked for, else the first the server lists. */
  model: z.string(),
  /** Native tool calling; when false the run speaks the text protocol. */
  toolCalling: z.boolean(),
  contextLength: z.int().nullable(),
  parallelSlots: z.int().nullable(),
});
export type EndpointProbe = z.infer<typeof EndpointProbeSchema>;
