import { z } from 'zod';
import { ApprovalDecisionSchema, ApprovalRequestSchema } from '../schemas/approval';
import { AuditReportSchema, VerifyResultSchema } from '../schemas/audit';
import { EndpointProbeSchema } from '../schemas/endpoint';
import { EstopStateSchema } from '../schemas/estop';
import { RunEventSchema } from '../schemas/events';
import { HostConfirmationSchema } from '../schemas/host-confirmation';
import { UndoOutcomeSchema, UndoStepSchema } from '../schemas/file-effect';
import { McpProbeSchema } from '../schemas/mcp-probe';
import { MemoryIdSchema, MemoryItemSchema, MemoryKindSchema } from '../schemas/memory';
import { DownloadProgressSchema, LibraryModelSchema, ModelNameSchema } from '../schemas/models';
import { RunDetailSchema, StartRunInputSchema } from '../schemas/run-detail';
import { RunIdSchema, RunOptionsSchema, RunSummarySchema, ScheduleIdSchema } from '../schemas/run';
import { ClusterRunSchema, InboxItemSchema, RunOrderApproveSchema, RunOrderOptionsSchema, ScheduleSchema, ScheduleStateSchema } from '../schemas/run-order';
import { McpServerConfigSchema, McpServerNameSchema, SettingsPatchSchema, SettingsSchema } from '../schemas/settings';

const command = <I extends z.ZodType, O extends z.ZodType>(input: I, output: O) => ({ input, output });
const noInput = z.object({}).strict();
const runRef = z.object({ runId: RunIdSchema }).strict();
/** A decision on one request, naming the action it was shown (its hash), so a request changed since is not answered blind. */
const approvalAnswer = z.object({ approvalId: z.string().min(1).max(64), actionHash: z.string().regex(/^[0-9a-f]{64}$/), decision: ApprovalDecisionSchema }).strict();
/** An API key for the request's model server: saved for that origin only, never sent to another. */
const apiKey = z.string().min(1).max(4096).optional();

export const AppInfoSchema = z.object({
  version: z.string(),
  dataDir: z.string(),
  host: z.enum(['electron', 'headless']),
  /** What a run started from the UI uses unless the composer says otherwise. */
  runDefaults: RunOptionsSchema.pick({ modelUrl: true, model: true, policy: true, workspace: true }),
  /** The run settings the host's command line fixed (`archon serve --model-url …`): Settings shows them read-only. */
  hostFlags: z.array(RunOptionsSchema.keyof()).default([]),
  /** Why API keys are not sealed by an OS keychain here (they stay in memory for the session), shown in Settings; null when they are. */
  keyStorageNote: z.string().nullable().default(null),
});

/** A library model as the Models view shows it: with its download under way, and why the last one failed. */
export const ModelEntrySchema = LibraryModelSchema.extend({
  download: DownloadProgressSchema.nullable(),
  lastError: z.string().nullable(),
});
export type ModelEntry = z.infer<typeof ModelEntrySchema>;

const modelRef = z.object({ name: ModelNameSchema }).strict();

/**
 * The one contract between the UI and the runtime. The preload bridge, the Electron handlers, the
 * headless host and the renderer client are all derived from this object.
 */
export const contract = {
  'app.info': command(noInput, AppInfoSchema),
  'runs.list': command(z.object({ limit: z.int().min(1).max(500).default(100) }).strict(), z.array(RunSummarySchema)),
  /** The inbox: runs the workers of a Restate cluster drove on this data dir (schedules' and detached ones) that ended or wait for an answer, the latest first. */
  'inbox.list': command(z.object({ limit: z.int().min(1).max(500).default(100) }).strict(), z.array(InboxItemSchema)),
  /** The schedules the Restate cluster of Settings → Engine keeps, with their next firing. */
  'schedules.list': command(noInput, z.array(ScheduleStateSchema)),
  /** Adds a schedule (or replaces the one of the same id) on that cluster; a schedule whose runs may do more than the defaults asks the operator outside the page. */
  'schedules.add': command(ScheduleSchema.extend({ id: ScheduleIdSchema.optional(), approve: RunOrderApproveSchema.default('deny'), options: RunOrderOptionsSchema.default({}) }).strict(), ScheduleStateSchema),
  'schedules.remove': command(z.object({ id: ScheduleIdSchema }).strict(), z.object({ removed: z.boolean() })),
  'estop.status': command(noInput, EstopStateSchema),
  'host.confirmations': command(noInput, z.array(HostConfirmationSchema)),
  'estop.trigger': command(
    z.object({ reason: z.string().min(1).max(500).default('Emergency stop pressed in the app') }).strict(),
    EstopStateSchema,
  ),
  'estop.reset': command(noInput, EstopStateSchema),
  'settings.get': command(noInput, SettingsSchema),
  'settings.update': command(SettingsPatchSchema, SettingsSchema),
  'runs.start': command(StartRunInputSchema.extend({ apiKey }).strict(), z.object({ runId: RunIdSchema })),
  'runs.get': command(runRef, RunDetailSchema),
  'runs.resume': command(runRef, z.object({ runId: RunIdSchema })),
  'runs.delete': command(runRef, z.object({ deleted: z.literal(true) })),
  /** What undoing a run's file writes would change (last first), and then undoing them: a file changed since is left and reported. */
  'runs.undoPreview': command(runRef, z.array(UndoStepSchema)),
  'runs.undo': command(runRef, UndoOutcomeSchema),
  /** Stops one run, wherever it is driven, without the emergency stop: its end is told by run.stopped. */
  'runs.stop': command(runRef, z.object({ runId: RunIdSchema })),
  'runs.pause': command(runRef, z.object({ runId: RunIdSchema })),
  'approvals.list': command(noInput, z.array(ApprovalRequestSchema)),
  'approvals.decide': command(approvalAnswer, z.object({ accepted: z.literal(true) })),
  /** The runs the workers of the cluster in Settings drive or drove, the latest first; none without a cluster. */
  'clusterRuns.list': command(noInput, z.array(ClusterRunSchema)),
  /** The events of one of them after `afterSeq`, as its worker sent them, oldest first (a few hundred per read); none without a cluster. */
  'clusterRuns.events': command(z.object({ runId: z.uuid(), afterSeq: z.int().min(0).default(0) }).strict(), z.array(RunEventSchema)),
  /** Asks whichever worker holds one of them (or takes it up next) to stop it; whether a worker holds it now. Its end shows in the list. */
  'clusterRuns.stop': command(z.object({ runId: z.uuid() }).strict(), z.object({ held: z.boolean() })),
  /** What runs that workers of the cluster in Settings drive ask a person, oldest first; none without a cluster. */
  'clusterApprovals.list': command(noInput, z.array(ApprovalRequestSchema)),
  /** Answers one of them on the cluster, signed with its secret; refused when it no longer waits or names another action. */
  'clusterApprovals.decide': command(approvalAnswer, z.object({ accepted: z.literal(true) })),
  'endpoint.probe': command(z.object({ modelUrl: z.url({ protocol: /^https?$/ }), model: z.string().max(200).optional(), apiKey }).strict(), EndpointProbeSchema),
  'audit.report': command(z.object({ runId: RunIdSchema.optional(), day: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).optional() }).strict(), AuditReportSchema),
  'audit.verify': command(noInput, VerifyResultSchema),
  /** Starts one MCP server (a saved one, or a config the operator confirms outside the page) and lists its tools, or says what failed. */
  'mcp.probe': command(z.object({ name: McpServerNameSchema, config: McpServerConfigSchema }).strict(), McpProbeSchema),
  /** Long-term memory, newest first; with a query, what matches it (lexical search), best first. */
  'memory.list': command(
    z.object({ kind: MemoryKindSchema.optional(), query: z.string().trim().min(1).max(500).optional(), limit: z.int().min(1).max(500).default(100) }).strict(),
    z.array(MemoryItemSchema),
  ),
  /** The items still stored among `ids` (a step's recalled memories, to read); a forgotten one is left out. */
  'memory.get': command(z.object({ ids: z.array(MemoryIdSchema).min(1).max(100) }).strict(), z.array(MemoryItemSchema)),
  /** New text, a pin, or the scope: a global item is recalled by runs of every workspace, a local one by runs of its own. */
  'memory.update': command(z.object({ id: MemoryIdSchema, text: MemoryItemSchema.shape.text.optional(), pinned: z.boolean().optional(), global: z.boolean().optional() }).strict(), MemoryItemSchema),
  'memory.forget': command(z.object({ id: MemoryIdSchema }).strict(), z.object({ forgotten: z.literal(true) })),
  /** The model library (the catalogue, pulled and added models), each with its download under way; polled while one runs. */
  'models.list': command(noInput, z.array(ModelEntrySchema)),
  /** Starts a model's download in the background and returns at once; its progress shows in models.list. */
  'models.pull': command(modelRef, z.object({ started: z.literal(true) })),
  'models.cancel': command(modelRef, z.object({ cancelled: z.literal(true) })),
  'models.remove': command(modelRef, z.object({ removed: z.literal(true) })),
  /** Records a local .gguf file (an absolute path on the host) in the library, where it is. */
  'models.add': command(z.object({ path: z.string().trim().min(1).max(4096) }).strict(), LibraryModelSchema),
};

export type Contract = typeof contract;
export type CommandName = keyof Contract;
export type CommandInput<K extends CommandName> = z.input<Contract[K]['input']>;
export type ParsedCommandInput<K extends CommandName> = z.output<Contract[K]['input']>;
export type CommandOutput<K extends CommandName> = z.output<Contract[K]['output']>;

export const COMMAND_NAMES = Object.keys(contract) as CommandName[];

export function isCommandName(name: string): name is CommandName {
  return Object.hasOwn(contract, name);
}

/** Every Electron IPC channel is this prefix plus a command name; main and preload refuse all others. */
export const IPC_PREFIX = 'archon:';
export const IPC_EVENT_CHANNEL = 'archon:event';
