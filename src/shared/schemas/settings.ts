import { z } from 'zod';
import { ApprovalKindSchema } from './approval';
import { RoleNameSchema, StoredRoleSchema } from './roles';
import { ClusterSettingSchema, ModelPriceSchema, PolicySchema, VerificationSchema } from './run';

export const ThemeSchema = z.enum(['system', 'light', 'dark']);

/** Per tool: ask every time, never ask, or follow the run's policy. */
export const ToolApprovalOverrideSchema = z.enum(['always', 'never', 'default']);
export type ToolApprovalOverride = z.infer<typeof ToolApprovalOverrideSchema>;

export const SandboxModeSchema = z.enum(['on', 'off']);
export type SandboxMode = z.infer<typeof SandboxModeSchema>;

/** One MCP server, in the `mcpServers` shape Claude Desktop and Cursor write: a command to start (stdio) or a URL (Streamable HTTP, SSE as fallback). */
export const McpServerConfigSchema = z.union([
  z
    .object({
      command: z.string().min(1).max(1000),
      args: z.array(z.string().max(4000)).max(100).optional(),
      env: z.record(z.string(), z.string()).optional(),
      disabled: z.boolean().optional(),
      /** The largest message the server may send, in bytes (default 8 MiB); a larger one stops it and fails its call. */
      maxMessageBytes: z.number().int().min(65_536).max(1_073_741_824).optional(),
    })
    .strict(),
  z.object({ url: z.url({ protocol: /^https?$/ }), headers: z.record(z.string(), z.string()).optional(), disabled: z.boolean().optional() }).strict(),
]);
export type McpServerConfig = z.infer<typeof McpServerConfigSchema>;

/** Server names become tool-name prefixes (`NAME__TOOL`). */
export const McpServerNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,32}$/, 'A server name is 1-32 letters, digits, "_" or "-".')
  // Tools are named SERVER__TOOL: the first "__" must end the server's name, or two servers' tools could share one.
  .refine((name) => !name.includes('__') && !name.endsWith('_'), 'A server name may not contain "__" or end in "_" (its tools are named SERVER__TOOL); rename the server.');

/** The file `--mcp-config FILE` reads, the same JSON as Claude Desktop's. */
export const McpConfigFileSchema = z.object({ mcpServers: z.record(McpServerNameSchema, McpServerConfigSchema) });

export const SettingsSchema = z.object({
  modelUrl: z.url({ protocol: /^https?$/ }),
  model: z.string().max(200),
  policy: PolicySchema,
  concurrency: z.int().min(1).max(64).nullable(),
  networkTools: z.boolean(),
  /** run_command confined by the OS sandbox ("on"), or run unconfined after approval under every policy ("off"). */
  sandbox: SandboxModeSchema,
  /** Whether sandboxed commands may use the network. */
  allowNetwork: z.boolean(),
  disabledTools: z.array(z.string().max(64)).max(100),
  toolApproval: z.record(z.string().max(64), ToolApprovalOverrideSchema),
  /** How long each kind of approval request waits before it expires (counts as rejected); unset kinds use the defaults. */
  approvalExpirySeconds: z.partialRecord(ApprovalKindSchema, z.number().positive().max(7 * 24 * 3600)),
  dailyMaxTokens: z.int().positive().nullable(),
  dailyMaxCostUsd: z.number().positive().nullable(),
  /** The model's context in tokens, for servers that do not report theirs (see docs/model-protocol.md). */
  contextLength: z.int().min(256).max(10_000_000).nullable(),
  theme: ThemeSchema,
  /** Model calls: how long to wait for the first chunk and between chunks, and how long to keep retrying before the run pauses. */
  modelFirstByteTimeoutSeconds: z.number().positive().max(3600),
  modelIdleTimeoutSeconds: z.number().positive().max(3600),
  modelRetryWindowSeconds: z.number().nonnegative().max(24 * 3600),
  verification: VerificationSchema,
  repairBudget: z.int().min(0).max(10),
  maxReplans: z.int().min(0).max(10),
  mcpServers: z.record(McpServerNameSchema, McpServerConfigSchema),
  /** Prices the operator set, by model name; they win over the built-in table and make `--max-cost` usable for any model. */
  modelPrices: z.record(z.string().min(1).max(200), ModelPriceSchema),
  /** Long-term memory: recall and store for runs (a run may still say `--no-memory`). */
  memory: z.boolean(),
  /** The embedding model on the model server, for vector recall; null: lexical recall only. */
  embeddingModel: z.string().max(200).nullable(),
  /** Long-term memory's bound: beyond it the least recently used unpinned items are summarised, then expire. */
  memoryMaxItems: z.int().min(100).max(1_000_000),
  /** Whether the Dreamer runs by itself after each run (`archon dream` runs it on demand). */
  autoDream: z.boolean(),
  /** The role registry (keys are kept with the saved API keys, by origin). */
  roles: z.record(RoleNameSchema, StoredRoleSchema),
  /** How many sub-agent runs may run at once, across a run and its children. */
  maxSubagents: z.int().min(1).max(8),
  /** The most steps a model's plan may have (the run caps scale with it, see docs/ARCHITECTURE.md). */
  maxPlanSteps: z.int().min(1).max(1000),
  /** How many tool processes may run at once; null: as many as the plan's widest level needs, bounded by the cores. */
  toolWorkers: z.int().min(1).max(64).nullable(),
  /** Where runs send their built-in tool calls: the workers of this Restate cluster; null: this machine's tool processes (`--engine` overrides). */
  cluster: ClusterSettingSchema.nullable(),
});
export type Settings = z.infer<typeof SettingsSchema>;

export const SettingsPatchSchema = SettingsSchema.partial().strict();
export type SettingsPatch = z.infer<typeof SettingsPatchSchema>;

export const DEFAULT_SETTINGS: Settings = {
  modelUrl: 'http://127.0.0.1:11434/v1',
  model: '',
  policy: 'balanced',
  concurrency: null,
  networkTools: false,
  sandbox: 'on',
  allowNetwork: false,
  disabledTools: [],
  toolApproval: {},
  approvalExpirySeconds: {},
  dailyMaxTokens: null,
  dailyMaxCostUsd: null,
  contextLength: null,
  theme: 'system',
  modelFirstByteTimeoutSeconds: 300,
  modelIdleTimeoutSeconds: 60,
  modelRetryWindowSeconds: 120,
  verification: 'checks',
  repairBudget: 2,
  maxReplans: 3,
  mcpServers: {},
  modelPrices: {},
  memory: true,
  embeddingModel: null,
  memoryMaxItems: 10_000,
  autoDream: true,
  roles: {},
  maxSubagents: 2,
  maxPlanSteps: 64,
  toolWorkers: null,
  cluster: null,
};
