import { z } from 'zod';
import { ResultEnvelopeSchema } from './envelope';

/** Frames on the headless host's WebSocket (`/ws`). */
export const ClientFrameSchema = z.object({
  id: z.int().nonnegative(),
  command: z.string().max(100),
  input: z.unknown(),
});
export type ClientFrame = z.infer<typeof ClientFrameSchema>;

export const ServerFrameSchema = z.union([
  z.object({ id: z.int().nonnegative().nullable(), result: ResultEnvelopeSchema }),
  z.object({ event: z.unknown() }),
]);
export type ServerFrame = z.infer<typeof ServerFrameSchema>;

export const WS_PATH = '/ws';
export const TOKEN_PARAM = 'token';
/** The subprotocol the host selects; the page offers it with its token as a second one (`archon-token.TOKEN`), never in a cookie or the URL. */
export const WS_PROTOCOL = 'archon';
export const TOKEN_PROTOCOL_PREFIX = 'archon-token.';
