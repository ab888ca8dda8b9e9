import { z } from 'zod';

/** Stable error codes. Each says what went wrong; the message says what to do. */
export const ErrorCodeSchema = z.enum([
  'VALIDATION_FAILED',
  'UNKNOWN_COMMAND',
  'IPC_SENDER_REJECTED',
  'CONFIG_INVALID',
  'MODEL_UNREACHABLE',
  'MODEL_CALL_FAILED',
  'MODEL_UNAVAILABLE',
  'MODEL_OUTPUT_INVALID',
  'CONTEXT_TOO_SMALL',
  'PLAN_INVALID',
  'TOOL_NOT_FOUND',
  'TOOL_FAILED',
  'STORE_CORRUPT',
  'STORE_LOCKED',
  'STORE_FAILED',
  'DISK_FULL',
  'RUN_LEASED',
  'ESTOP_LATCHED',
  'BUDGET_EXCEEDED',
  'APPROVAL_EXPIRED',
  'APPROVAL_REJECTED',
  'AUDIT_RESET_REQUIRED',
  'NOT_FOUND',
  'CANCELLED',
  /** A download did not give a whole, verified file (the connection, the server, or a checksum that does not match). */
  'DOWNLOAD_FAILED',
  /** The operator paused the run (`archon pause`, Pause run): it ends `paused`, and resume continues it. */
  'PAUSED',
  'NOT_CONFIRMED',
  /** Repairs, re-plans and the operator's escalation did not get a step through: the run ends failed with the diagnosis. */
  'RECOVERY_EXHAUSTED',
  /** The outcome check found the goal's success criteria unmet and no one accepted the gaps: the run ends failed, naming them. */
  'CRITERIA_UNMET',
  /** No Restate server answers at the address a run or worker was given (`--engine restate`). */
  'CLUSTER_UNREACHABLE',
  /** The Restate server answered a request with an error. */
  'CLUSTER_REFUSED',
  'INTERNAL',
]);
export type ErrorCode = z.infer<typeof ErrorCodeSchema>;

/** The plain shape an error takes across every process boundary (IPC, WebSocket, tool process). */
export const ErrorEnvelopeSchema = z.object({
  code: ErrorCodeSchema,
  message: z.string(),
  details: z.unknown().optional(),
});
export type ErrorEnvelope = z.infer<typeof ErrorEnvelopeSchema>;

const MARKER = Symbol.for('archon.error');

export class ArchonError extends Error {
  readonly [MARKER] = true;
  readonly code: ErrorCode;
  readonly details: unknown;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; details?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'ArchonError';
    this.code = code;
    this.details = options.details;
  }

  /** Works across bundles and realms, where `instanceof` does not. */
  static isInstance(value: unknown): value is ArchonError {
    return typeof value === 'object' && value !== null && MARKER in value;
  }
}

export function toErrorEnvelope(error: unknown): ErrorEnvelope {
  if (ArchonError.isInstance(error)) {
    return error.details === undefined
      ? { code: error.code, message: error.message }
      : { code: error.code, message: error.message, details: error.details };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { code: 'INTERNAL', message: `Unexpected error: ${message}` };
}

export function fromErrorEnvelope(envelope: ErrorEnvelope): ArchonError {
  return new ArchonError(envelope.code, envelope.message, { details: envelope.details });
}

/** Turns zod issues into one sentence per problem, with the path that failed. */
export function describeZodError(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(input)'}: ${issue.message}`)
    .join('; ');
}
