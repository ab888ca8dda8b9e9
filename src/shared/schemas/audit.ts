import { z } from 'zod';

export const SeveritySchema = z.enum(['info', 'low', 'medium', 'high', 'critical']);
export type Severity = z.infer<typeof SeveritySchema>;

/** What a detector finds in one run's events. */
export const DetectionSchema = z.object({
  detector: z.enum(['boundary', 'convergence', 'drift', 'role', 'replan', 'escalation', 'spawn', 'budget', 'emergency_stop', 'outcome', 'injection']),
  severity: SeveritySchema,
  title: z.string(),
  explanation: z.string(),
  /** The audit records (and the run events they hold) the finding rests on. */
  evidence: z.array(z.object({ record: z.int(), event: z.string(), eventSeq: z.int() })),
});
export type Detection = z.infer<typeof DetectionSchema>;

/** A detection in a report: it names the run it is about (a report on a run covers its sub-agents' runs too). */
export const FindingSchema = DetectionSchema.extend({ runId: z.string() });
export type Finding = z.infer<typeof FindingSchema>;

export const AuditRunSummarySchema = z.object({
  runId: z.string(),
  goal: z.string().nullable(),
  status: z.string(),
  steps: z.record(z.string(), z.int()),
  toolCalls: z.record(z.string(), z.int()),
  /** `decidedBy`: the answers counted by who gave them (`rule`, `expiry`, `operator:<channel>`; `unrecorded` in runs from before it was kept). */
  approvals: z.object({ asked: z.int(), answers: z.record(z.string(), z.int()), decidedBy: z.record(z.string(), z.int()).default({}) }),
  tokens: z.int(),
  costUsd: z.number(),
  durationMs: z.number().nullable(),
  /** The agents on the run's bus, each with the messages it sent and received, counted per kind. */
  agents: z.record(z.string(), z.object({ sent: z.record(z.string(), z.int()), received: z.record(z.string(), z.int()) })).default({}),
});
export type AuditRunSummary = z.infer<typeof AuditRunSummarySchema>;

export const AuditReportSchema = z.object({
  scope: z.union([z.object({ runId: z.string() }), z.object({ day: z.string() })]),
  generatedAt: z.string(),
  runs: z.array(AuditRunSummarySchema),
  findings: z.array(FindingSchema),
});
export type AuditReport = z.infer<typeof AuditReportSchema>;

export const VerifyResultSchema = z.discriminatedUnion('intact', [
  /** `behind`: events archon.db holds that the auditor has not recorded yet (it lags; nothing was altered). */
  z.object({ intact: z.literal(true), records: z.int(), behind: z.object({ events: z.int().positive(), detail: z.string() }).optional() }),
  z.object({ intact: z.literal(false), records: z.int(), problem: z.string(), seq: z.int().nullable() }),
]);
export type VerifyResult = z.infer<typeof VerifyResultSchema>;
