import { z } from 'zod';
import { AuditReportSchema, VerifyResultSchema } from './schemas/audit';
import { ErrorEnvelopeSchema } from './errors';

const ScopeSchema = z.union([z.object({ runId: z.string() }), z.object({ day: z.string() })]);

/** Messages from a host (the CLI, the headless host, the app) to its auditor process. */
export const ToAuditorSchema = z.discriminatedUnion('type', [
  /** New events of these runs (or an emergency stop) are committed to archon.db: read them now rather than at the next poll. */
  z.object({ type: z.literal('nudge'), runIds: z.array(z.string()) }),
  /** The host is about to exit: catch up to the last committed event, answer `drained`, exit. */
  z.object({ type: z.literal('drain') }),
  z.object({ type: z.literal('report'), id: z.int().nonnegative(), scope: ScopeSchema }),
  z.object({ type: z.literal('verify'), id: z.int().nonnegative() }),
  /** Sent to an auditor started again after its predecessor died (its exit code or signal): it records `auditor.restarted`. */
  z.object({ type: z.literal('restarted'), code: z.int().nullable(), signal: z.string().nullable(), restarts: z.int().positive() }),
]);
export type ToAuditor = z.infer<typeof ToAuditorSchema>;

/** Messages from the auditor process to its host. */
export const FromAuditorSchema = z.discriminatedUnion('type', [
  /** Caught up on every event archon.db held at start; following it from now on. */
  z.object({ type: z.literal('ready'), audited: z.int().nonnegative() }),
  /** The log cannot be vouched for (a reset must be acknowledged): the auditor appends nothing and no run may start. */
  z.object({ type: z.literal('refused'), problem: z.string() }),
  z.object({ type: z.literal('drained'), audited: z.int().nonnegative() }),
  z.object({ type: z.literal('report'), id: z.int().nonnegative(), report: AuditReportSchema }),
  z.object({ type: z.literal('verify'), id: z.int().nonnegative(), result: VerifyResultSchema }),
  z.object({ type: z.literal('failed'), id: z.int().nonnegative().nullable(), error: ErrorEnvelopeSchema }),
]);
export type FromAuditor = z.infer<typeof FromAuditorSchema>;
