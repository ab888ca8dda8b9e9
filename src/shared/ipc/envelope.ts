import { z } from 'zod';
import { ErrorEnvelopeSchema, type ErrorEnvelope } from '../errors';

/** A command's answer on the wire: errors are values, never thrown across a process boundary. */
export const ResultEnvelopeSchema = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), value: z.unknown() }),
  z.object({ ok: z.literal(false), error: ErrorEnvelopeSchema }),
]);

export type ResultEnvelope<T> = { ok: true; value: T } | { ok: false; error: ErrorEnvelope };
